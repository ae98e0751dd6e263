"""A square weight whose two axes meet through another op (python/kforge_py/spec_dims.py): the
contraction joins a Linear's / matmul's in-axis to its input's features and an element-wise op
(a residual add, a product with the input) joins the input's features to the output's, so as
hard unions both axes of W[d, d] were one dim - W [D, D], whose orientation a kernel reading dims
by name cannot tell (no start program: 'cannot tell which is contracted'). The element-wise
union gives way: the output axis keeps a name of its own (d_model_1, equal to d_model at every
binding) and the operand is read through a renaming reshape where the values meet. Our own
KernelBench-format files in fixtures/sweep (a residual Linear(d, d) + LayerNorm, x * (x @ W), a
residual MLP of d -> d layers, a Linear(d, d) feeding a second one and added to the input), each
with a non-symmetric weight: import, match PyTorch in fp64 through the interpreter at reduced
sizes (the orientation of W checked numerically), name the weights' axes apart, plan and pass the
simulated gates (the checker's proof that the program computes the problem)."""
import os
import unittest

import kforge_test_util as util
from kforge_py import kernelbench, spec_build, spec_torch

FILES = ["square_residual_linear", "square_gated_matmul", "square_residual_mlp",
         "square_chained_linear"]
# square weights per file: (input name) - both axes of extent d
WEIGHTS = {"square_residual_linear": ["proj_weight"], "square_gated_matmul": ["w"],
           "square_residual_mlp": ["fc_0_weight", "fc_1_weight"],
           "square_chained_linear": ["fc1_weight", "fc2_weight"]}


fixture = util.sweep_fixture


_ops = util.ops_of


class SquareWeight(util.ImportedFixtures):
    FILES = FILES

    def test_each_file_imports_and_matches_pytorch_at_reduced_sizes(self):
        self.assertEqual(self.rc, 0, self.log)
        for stem in FILES:
            with self.subTest(stem):
                self.assertRegex(self.log, r"ok: .*%s\.py: .*interpreter = PyTorch \(fp64\) at"
                                 r".*reduced sizes" % stem)

    def test_square_weights_name_their_axes_apart(self):
        for stem in FILES:
            spec = self.spec(stem)
            for w in WEIGHTS[stem]:
                with self.subTest(stem=stem, weight=w):
                    rows, cols = spec["inputs"][w]["shape"]
                    self.assertNotEqual(rows, cols)
                    self.assertEqual(spec["dims"][rows], spec["dims"][cols])
            for name, t in spec["inputs"].items():
                named = [e for e in t["shape"] if isinstance(e, str)]
                self.assertEqual(len(named), len(set(named)), (stem, name, t["shape"]))

    def test_residual_reads_the_projection_under_the_inputs_names(self):
        # the sum keeps x's feature dim (the LayerNorm normalizes d_model, its weight [d_model]);
        # the projection [.., d_model_1] is renamed to [.., d_model] where it meets x
        spec = self.spec("square_residual_linear")
        x = spec["inputs"]["x"]["shape"]
        (rename,) = _ops(spec, "reshape")
        self.assertEqual(rename["inputs"], ["proj"])
        self.assertEqual(rename["shape"], x)
        (add,) = _ops(spec, "add")
        self.assertEqual(add["inputs"], ["x", rename["output"]])
        self.assertEqual(spec["inputs"]["proj_weight"]["shape"], ["d_model_1", "d_model"])
        self.assertEqual(_ops(spec, "layer_norm")[0]["normalized_shape"], ["d_model"])

    def test_spec_torch_runs_the_renames_as_pytorch(self):
        # kforge baseline's module: the renaming reshape is the identity on the values
        for stem in FILES:
            with self.subTest(stem):
                loaded = kernelbench.load(fixture(stem))
                spec, conv = spec_build.build(loaded, "t", "")
                feeds = spec_build.feeds(loaded, conv)
                got = spec_torch.make_forward(spec)(*[feeds[n] for n in spec["inputs"]])[0]
                want = loaded.model(*loaded.inputs)
                self.assertLess((got - want).abs().max().item(), 1e-4)

    def test_each_file_plans_and_passes_the_gates(self):
        for stem in FILES:
            with self.subTest(stem):
                out = os.path.join(self.tmp.name, stem + "_out")
                r = util.kforge("optimize", self.spec_path(stem), "--device", "sim",
                                "--rounds", "1", "--db", os.path.join(self.tmp.name, stem + ".db"),
                                "--out", out)
                log = r.stdout + r.stderr
                self.assertEqual(r.returncode, 0, log)
                self.assertIn("synthesized one from the problem", log)
                self.assertIn("gates: static(ok)", log)


if __name__ == "__main__":
    unittest.main()
