"""KernelBench-format files of session 20's generalization sweep that the importer or planner
refused or got wrong (bench/kernelbench/results/2026-12-06-cpu-sweep-s20.md), kforge's own, in
fixtures/sweep/: each must import, match PyTorch in fp64 through the interpreter, and plan
(`kforge optimize --device sim --rounds 0`: every kernel checked and lowered); the constructs
they brought are checked where the spec shows them. What the spec cannot write still fails by
name, with exit 1 and no traceback."""
import os
import tempfile
import unittest

import kforge_test_util as util
from kforge_py import kernelbench, spec_build, spec_torch

SWEEP = ["where_comparisons", "rnn_no_state", "pixel_shuffle_conv", "addmm_glu_softmax2d",
         "upsample_repeat_clamp", "scan_normalize_middle_dim", "conv1d_avg_pool_1d",
         "prelu_nll_loss", "conv_logsumexp_spatial", "inplace_flatten_modules", "rnn_cells_loop",
         "mask_input_select"]


fixture = util.sweep_fixture


_ops = util.ops_of


class Sweep(util.ImportedFixtures):
    FILES = SWEEP

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.r = cls.result
        cls.lines = util.import_lines(cls.r.stdout)

    def test_each_file_imports_and_matches_pytorch(self):
        self.assertEqual(self.r.returncode, 0, self.r.stdout + self.r.stderr)
        for stem in SWEEP:
            with self.subTest(stem):
                status, msg = self.lines[stem]
                self.assertEqual(status, "ok", msg)
                self.assertIn("interpreter = PyTorch (fp64) at", msg)

    def test_each_file_plans(self):
        for stem in SWEEP:
            with self.subTest(stem):
                r = util.kforge("optimize", self.spec_path(stem), "--device", "sim",
                                "--rounds", "0", "--db", os.path.join(self.tmp.name, stem + ".db"))
                # (exit 1 by design: with no round, no candidate was evaluated)
                self.assertIn("synthesized one from the problem", r.stdout + r.stderr)

    def test_comparisons_are_indicators_not_bool_inputs(self):
        # x > 0 and friends: sign of the difference, clamped to [0, 1]; no drawn bool mask
        spec = self.spec("where_comparisons")
        self.assertFalse([n for n, t in spec["inputs"].items() if t["dtype"] == "bool"])
        self.assertFalse(_ops(spec, "where") + _ops(spec, "masked_fill"))
        self.assertGreaterEqual(len(_ops(spec, "sign")), 5)
        self.assertEqual(len(_ops(spec, "log")), 1)  # the -inf fill: x + log(1 - mask)

    def test_bool_input_masks_are_selects_in_map_kernels(self):
        # masks from get_inputs() stay bool inputs; each select plans into a map kernel that
        # reads the mask (`masked_fill M[..] c`, where as `load` of the other branch)
        spec = self.spec("mask_input_select")
        bools = sorted(n for n, t in spec["inputs"].items() if t["dtype"] == "bool")
        self.assertEqual(bools, ["keep", "pad"])
        self.assertEqual(len(_ops(spec, "masked_fill")), 2)
        self.assertEqual(len(_ops(spec, "where")), 1)
        with tempfile.TemporaryDirectory() as d:
            r = util.kforge("optimize", self.spec_path("mask_input_select"), "--device", "sim",
                            "--rounds", "1", "-o", d, "--db", os.path.join(d, "r.db"))
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("correctness_small(ok) correctness_full(ok)", r.stdout)
            with open(os.path.join(d, "best.kf")) as f:
                program = f.read()
        self.assertIn("masked_fill pad[batch,seq] -inf", program)
        self.assertRegex(program, r"load y\[batch,seq\]; masked_fill keep\[batch,1\] w0")

    def test_missing_rnn_state_is_a_zero_param(self):
        spec = self.spec("rnn_no_state")
        (gru,), (lstm,) = _ops(spec, "gru"), _ops(spec, "lstm")
        for state in [gru["inputs"][1]] + lstm["inputs"][1:3]:
            self.assertTrue(spec["inputs"][state].get("param"), state)

    def test_pixel_shuffle_is_reshape_permute_reshape(self):
        spec = self.spec("pixel_shuffle_conv")
        perms = [op["dims"] for op in _ops(spec, "permute")]
        self.assertIn([0, 1, 4, 2, 5, 3], perms)  # shuffle: [B, C, H, r, W, r]
        self.assertIn([0, 1, 3, 5, 2, 4], perms)  # unshuffle: [B, C, r, r, H, W]

    def test_addmm_is_a_matmul_with_the_transposed_weight(self):
        spec = self.spec("addmm_glu_softmax2d")
        (mm,) = _ops(spec, "matmul")
        self.assertTrue(mm.get("transpose_b"))
        self.assertEqual(len(_ops(spec, "softmax")), 1)



class SweepSpecTorch(unittest.TestCase):
    """spec_torch, `kforge baseline`'s module, runs the sweep's specs as PyTorch does."""

    def assert_spec_torch_matches(self, stem):
        loaded = kernelbench.load(fixture(stem))
        spec, conv = spec_build.build(loaded, "t", "")
        feeds = spec_build.feeds(loaded, conv)
        got = spec_torch.make_forward(spec)(*[feeds[n] for n in spec["inputs"]])[0]
        self.assertLess((got - loaded.model(*loaded.inputs)).abs().max().item(), 1e-5)

    def test_spec_torch_runs_a_1d_avg_pool(self):
        # F.avg_pool1d takes no divisor_override
        self.assert_spec_torch_matches("conv1d_avg_pool_1d")

    def test_spec_torch_runs_a_reshape_naming_two_derived_dims(self):
        # the nearest upsampling after a pool reshapes to [N, C, height_out, 1, width_out, 1]:
        # both pooled extents come from the pool op's out_dims (PyTorch infers one -1 at most)
        self.assert_spec_torch_matches("upsample_repeat_clamp")


class SweepRefusals(unittest.TestCase):
    def refused(self, forward, inputs, pattern, init=""):
        path = util.kernelbench_file(init, forward, inputs, "batch_size = 4\ndim = 12")
        try:
            with tempfile.TemporaryDirectory() as d:
                r = util.kforge("import", "kernelbench", path, "-o", d)
        finally:
            os.unlink(path)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertRegex(r.stdout, "FAILED: .*" + pattern)
        self.assertNotIn("Traceback", r.stdout + r.stderr)

    def test_a_comparison_returned_or_counted_is_refused_by_name(self):
        self.refused("return x > 0", "torch.randn(batch_size, dim)",
                     "a comparison's bool result")
        self.refused("return (x > 0).sum(dim=1)", "torch.randn(batch_size, dim)",
                     r"sum of a comparison's result giving i64")

    def test_an_inplace_op_on_a_view_or_an_input_is_refused_by_name(self):
        # writing it would write the tensor it shares storage with
        self.refused("h = x.view(-1)\nh.mul_(2)\nreturn x * 1.5", "torch.randn(batch_size, dim)",
                     r"mul_ \(an in-place op\) on view, a view that may share its storage")
        self.refused("x.add_(1.0)\nreturn x * 2", "torch.randn(batch_size, dim)",
                     r"add_ \(an in-place op\) on x, an input")

    def test_embedding_and_bilinear_interpolation_are_refused_by_name(self):
        self.refused("return self.emb(x)", "torch.randint(0, 10, (batch_size, dim))",
                     "embedding is not supported", init="self.emb = nn.Embedding(10, 3)")
        self.refused("return F.interpolate(x.view(1, 1, batch_size, dim), scale_factor=2, "
                     "mode='bilinear')", "torch.randn(batch_size, dim)",
                     "interpolate / Upsample in mode 'bilinear' is not supported")


if __name__ == "__main__":
    unittest.main()
