"""Two axes of one extent in one tensor (python/kforge_py/spec_dims.py): kforge's kernels index,
broadcast and reduce by dim name, so such axes must have two names. Our own KernelBench-format
files, each with the construct that had one name twice - scores of a window against itself
(query and key axes of one source, the window's token count a number of forward's, as many
tokens as a head has channels) through a bias add, a softmax and a row mean; pairwise squared
distances of a point set (a broadcast of one tensor against itself, as many points as
coordinates); a running sum over a row of 3 chunks (shorter than a vector) whose pairwise
differences are then broadcast - import, match PyTorch in fp64 through the interpreter, name
every axis of an input and of a reshape's target apart, and plan (`kforge optimize --device sim`:
every kernel checked and lowered, the start program through the simulated device's gates)."""
import os
import unittest

import kforge_test_util as util
from kforge_py.fx_shape import resolve_dims

FILES = ["130_window_scores_bias_softmax", "131_pairwise_distance_smoother",
         "132_chunk_decay_short_scan"]


_ops = util.ops_of


class EqualExtents(util.ImportedFixtures):
    FILES = FILES  # examples/kernelbench/STEM.py (their specs kb_STEM.json)
    fixture = staticmethod(util.example)

    def test_each_file_imports_and_matches_pytorch(self):
        self.assertEqual(self.rc, 0, self.log)
        for stem in FILES:
            with self.subTest(stem):
                self.assertRegex(self.log, r"ok: .*%s\.py: .*interpreter = PyTorch \(fp64\) at"
                                 % stem)

    def test_no_input_or_reshape_target_names_a_dim_twice(self):
        for stem in FILES:
            spec = self.spec(stem)
            shapes = [(n, t["shape"]) for n, t in spec["inputs"].items()]
            shapes += [(op["output"], op["shape"]) for op in _ops(spec, "reshape")]
            for name, shape in shapes:
                with self.subTest(stem=stem, tensor=name):
                    named = [e for e in shape if isinstance(e, str)]
                    self.assertEqual(len(named), len(set(named)), shape)

    def test_query_and_key_axes_are_two_dims(self):
        # the bias [heads, tokens, tokens] and the two unsqueezes of one tensor each name their
        # axes apart, one of them after the other with a suffix (equal at every binding)
        spec = self.spec("130_window_scores_bias_softmax")
        _, rows, cols = spec["inputs"]["bias"]["shape"]
        self.assertNotEqual(rows, cols)
        values = resolve_dims(spec["dims"])  # (one may be derived: "4*D4", spec_derive)
        self.assertEqual(values[rows], values[cols])
        spec = self.spec("131_pairwise_distance_smoother")
        first, second = _ops(spec, "reshape")
        self.assertEqual({first["shape"][1], second["shape"][2]}, {"points", "points_1"})
        spec = self.spec("132_chunk_decay_short_scan")
        first, second = _ops(spec, "reshape")
        self.assertNotEqual(first["shape"][2], second["shape"][3])

    def optimize(self, stem):
        """One simulated round of the start program the planner synthesizes: (rc, output, the
        best program's text)."""
        out = os.path.join(self.tmp.name, stem + "_out")
        r = util.kforge("optimize", self.spec_path(stem), "--device", "sim", "--rounds", "1",
                        "--db", os.path.join(self.tmp.name, stem + ".db"), "--out", out)
        best = os.path.join(out, "best.kf")
        text = ""
        if os.path.exists(best):
            with open(best) as f:
                text = f.read()
        return r.returncode, r.stdout + r.stderr, text

    def test_each_file_plans_and_passes_the_gates(self):
        # planned (every kernel checked and lowered), and the program passes the simulated
        # device's gates (static: the checker's proof that it computes the problem)
        for stem in FILES:
            with self.subTest(stem):
                rc, out, _ = self.optimize(stem)
                self.assertEqual(rc, 0, out)
                self.assertIn("synthesized one from the problem", out)
                self.assertIn("gates: static(ok)", out)

    def test_short_scan_reads_one_element_at_a_time(self):
        # a row of 3 chunks: vec 1 (a vector of 4 would cross into the next row)
        rc, out, text = self.optimize("132_chunk_decay_short_scan")
        self.assertEqual(rc, 0, out)
        scan = [line for line in text.splitlines() if "rowwise cumsum(" in line]
        self.assertEqual(len(scan), 1, text)
        self.assertRegex(scan[0], r"\bvec 1\b")


if __name__ == "__main__":
    unittest.main()
