"""The head dim of a split of channels the importer names by their value, as a dim of its own
(python/kforge_py/spec_derive.py: name_split_pieces, _split_products). A reshape that cuts such
an axis into [heads, C // heads] wrote the head dim as a number; where a later reshape put its
-1 on the head count (after a grouped conv1d that mixes each head's tokens, KernelBench L3 29
SwinMLP), the number stayed and tied the channels to their full size at the correctness gates'
small shape: every other dim shrank, the channels could not, and the reference was over the CPU
budget ('no small shape fits'). Our own KernelBench-format file fixtures/sweep/
derived_window_heads.py (4x4 windows of 3072 channels, 6 heads of 512): the spec must name the
head dim, write the channels as 6 times it and the head dim by name in every reshape, match
PyTorch in fp64, run as PyTorch through spec_torch, and pass every simulated gate."""
import unittest

import kforge_test_util as util
from kforge_py import fx_shape, kernelbench, spec_build, spec_torch

STEM = "derived_window_heads"


class SplitPieces(util.ImportedFixtures):
    FILES = (STEM,)

    def test_imports_and_matches_pytorch(self):
        self.assertEqual(self.rc, 0, self.log)
        self.assertRegex(self.log, r"ok: .*%s\.py: .*interpreter = PyTorch \(fp64\) at" % STEM)

    def test_channels_are_heads_times_the_named_head_dim(self):
        spec = self.spec(STEM)
        dims = spec["dims"]
        channels = spec["inputs"]["embed_weight"]["shape"][0]
        expr = dims[channels]
        self.assertIsInstance(expr, str, dims)
        heads, head = expr.split("*")
        self.assertEqual(heads, "6")
        self.assertEqual(dims[head], 512)
        self.assertEqual(fx_shape.spec_extent(expr, fx_shape.resolve_dims(dims)), 3072)
        # no reshape writes the head dim as a number: each names it (the number tied C)
        for op in util.ops_of(spec, "reshape"):
            self.assertNotIn(512, op["shape"], op)
        self.assertTrue(any(head in op["shape"] for op in util.ops_of(spec, "reshape")))

    def test_spec_torch_runs_it_as_pytorch(self):
        loaded = kernelbench.load(util.sweep_fixture(STEM), overrides={"batch_size": 2})
        spec, conv = spec_build.build(loaded, "t", "")
        feeds = spec_build.feeds(loaded, conv)
        got = spec_torch.make_forward(spec)(*[feeds[n] for n in spec["inputs"]])[0]
        want = loaded.model(*loaded.inputs)
        self.assertLess((got - want).abs().max().item(), 1e-3)

    def test_passes_the_gates_at_a_small_shape_that_shrinks_the_channels(self):
        r = self.optimize_sim(STEM)
        log = r.stdout + r.stderr
        self.assertEqual(r.returncode, 0, log)
        self.assertNotIn("no small shape fits", log)
        self.assertIn("gates: static(ok)", log)
        self.assertRegex(log, r"correctness_small\(ok")


if __name__ == "__main__":
    unittest.main()
