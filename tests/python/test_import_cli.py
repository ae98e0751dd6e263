"""`kforge import kernelbench` end to end: every example file of a supported family imports,
checks and matches its PyTorch module through the fp64 interpreter (the convolutions at shrunk
sizes); the degenerate problem is flagged; a wrong mapping would be caught by the numeric check."""
import copy
import os
import re
import tempfile
import unittest

import kforge_test_util as util
from kforge_py import import_kernelbench, kernelbench, spec_build


def setUpModule():
    util.example_batch()  # one import of every example, read by the tests below


class ImportBatch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        batch = util.example_batch()
        cls.r, cls.lines = batch.r, batch.lines
        cls.tmp = tempfile.TemporaryDirectory()  # the databases of the optimize runs

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_exit_code_and_summary(self):
        self.assertEqual(self.r.returncode, 1, self.r.stdout + self.r.stderr)
        n = len(util.SUPPORTED)
        self.assertIn(f"imported {n} of {n + len(util.DEGENERATE)} file(s)", self.r.stdout)

    def test_supported_files_import_and_match_pytorch(self):
        for stem in util.SUPPORTED:
            with self.subTest(stem):
                status, msg = self.lines[stem]
                self.assertEqual(status, "ok", msg)
                self.assertIn("interpreter = PyTorch (fp64) at", msg)
                spec_path = util.example_batch().spec_path(stem)
                self.assertTrue(os.path.exists(spec_path))
                self.assertEqual(util.kforge("check", spec_path).returncode, 0)

    def test_kernelbench_gemm_shapes_get_a_start_program(self):
        # None of these had one before: A[N, N] @ B[N, N] and a Linear with in == out features
        # (one dim name for K and N), odd rows (4-byte accesses), nn.Linear on [batch, seq, d]
        # (a leading dim folded into M) and a matrix-vector product (N = 1)
        for stem in ("14_square_matmul", "15_gemm_sigmoid_residual", "16_matmul_irregular",
                     "17_linear_3d_gelu", "18_matvec"):
            with self.subTest(stem):
                spec_path = util.example_batch().spec_path(stem)
                db = os.path.join(self.tmp.name, stem + ".db")
                r = util.kforge("optimize", spec_path, "--device", "sim", "--rounds", "1",
                                "--db", db)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                self.assertIn("synthesized one from the problem", r.stdout + r.stderr)

    def test_numeric_check_runs_at_smaller_dims(self):
        _, msg = self.lines["01_gemm_bias_relu"]
        self.assertIn("batch_size=16", msg)
        self.assertIn("in_features=48", msg)

    def test_each_line_says_which_sizes_the_check_used(self):
        # 31's torch.std divides by n - 1 of the reduced size: the spec rebuilt at the reduced
        # sizes is checked (it was checked at the full size, 2.2M elements); 36's sizes are
        # all small already
        _, msg = self.lines["31_gemm_min_hardswish_std"]
        self.assertIn("interpreter = PyTorch (fp64) at batch_size=16,in_features=32,"
                      "out_features=48, reduced sizes (the file's: batch_size 128, in_features "
                      "1024, out_features 2048) on the spec rebuilt at them as its constants "
                      "depend on the sizes (std_scale), max |diff| ", msg)
        _, msg = self.lines["36_conv2d_bias_relu"]
        self.assertIn(", the file's own sizes (not reduced: its size variables are all <= 32), "
                      "max |diff| ", msg)

    def test_convolutions_are_checked_at_shrunk_sizes(self):
        # 09's `height = width = 64` (one literal, two names) shrinks too
        for stem, where in (("09_conv2d_relu", "height=32,width=32,"),
                            ("37_conv2d_strided", "height=16,width=16,out_channels=16,")):
            with self.subTest(stem):
                status, msg = self.lines[stem]
                self.assertEqual(status, "ok", msg)
                self.assertIn(where, msg)
                spec = util.load_json(util.example_batch().spec_path(stem))
                self.assertEqual(spec["graph"][0]["op"], "conv2d")

    def test_degenerate_problem_is_flagged(self):
        status, msg = self.lines["10_degenerate_gemm_max"]
        self.assertEqual(status, "FAILED")
        self.assertIn("degenerate problem: output gelu is constant", msg)
        self.assertIn("--allow-degenerate imports it anyway", msg)


class ImportOptions(unittest.TestCase):
    def test_allow_degenerate_and_policy(self):
        with tempfile.TemporaryDirectory() as d:
            r = util.kforge("import", "kernelbench", util.example("10_degenerate_gemm_max"),
                            "-o", d, "--allow-degenerate", "--policy", "tf32", "--atol", "0.02",
                            "--rtol", "0.01")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("degenerate: output gelu is constant", r.stdout)
            spec = util.load_json(os.path.join(d, "kb_10_degenerate_gemm_max.json"))
            self.assertEqual(spec["precision"], {"policy": "tf32", "atol": 0.02, "rtol": 0.01})


class NormalizeImports(unittest.TestCase):
    """The L1 / L2 normalization spellings fold into one op that matches PyTorch at fp64, at a
    shrunk instance (the shrink check keeps the structure), and plan as one row kernel."""

    def test_each_spelling_is_one_op_and_matches_pytorch(self):
        bodies = {"l1_normalize": ["return x / torch.sum(torch.abs(x), dim=1, keepdim=True)",
                                   "return F.normalize(x, p=1.0, dim=-1, eps=1e-6)"],
                  "l2_normalize": ["return x / torch.norm(x, p=2, dim=1, keepdim=True)",
                                   "return F.normalize(x, p=2, dim=1, eps=1e-12)"]}
        for kind, spellings in bodies.items():
            for body in spellings:
                with self.subTest(body):
                    spec, flag, line = util.import_body(body, "kb_norm")
                    self.assertEqual([op["op"] for op in spec["graph"]], [kind])
                    self.assertIsNone(flag)
                    self.assertIn("interpreter = PyTorch (fp64) at", line)
                    worst = float(re.search(r"max \|diff\| (\S+)", line).group(1))
                    self.assertLess(worst, 1e-12, line)

    def test_wrong_norm_or_eps_is_caught(self):
        util.assert_tampering_caught(
            self, "return x / torch.sum(torch.abs(x), dim=1, keepdim=True)",
            [("op", "l2_normalize"), ("eps", 100.0)], "kb_norm")

    def test_example_is_checked_shrunk_and_optimizes_on_the_simulator(self):
        with tempfile.TemporaryDirectory() as d:
            spec, out = util.import_example_and_optimize(self, "21_l1_l2_normalize", d)
            self.assertNotIn("batch_size=16384", out)  # checked at a shrunk instance
            self.assertEqual([op["op"] for op in spec["graph"]], ["l1_normalize", "l2_normalize"])


class ScanImports(unittest.TestCase):
    """cumsum / cumprod and the reverse cumsum (flips) import as one op that matches PyTorch at
    fp64; a wrong flag is caught; the example optimizes on the simulator."""

    def test_each_spelling_matches_pytorch(self):
        for body in ["return torch.cumsum(x, dim=1)", "return torch.cumprod(x, dim=1)",
                     "return torch.cumsum(x.flip(1), 1).flip(1)", "return x.cumsum(0)"]:
            with self.subTest(body):
                spec, flag, line = util.import_body(body, "kb_scan")
                self.assertIsNone(flag)
                self.assertIn("interpreter = PyTorch (fp64) at", line)
                worst = float(re.search(r"max \|diff\| (\S+)", line).group(1))
                self.assertLess(worst, 1e-9, line)

    def test_wrong_direction_or_flag_is_caught(self):
        util.assert_tampering_caught(
            self, "return torch.cumsum(x, dim=1)",
            [("reverse", True), ("exclusive", True), ("op", "cumprod")], "kb_scan")

    def test_example_is_checked_and_optimizes_on_the_simulator(self):
        with tempfile.TemporaryDirectory() as d:
            spec, _ = util.import_example_and_optimize(self, "22_cumsum", d)
            self.assertEqual([op["op"] for op in spec["graph"]], ["cumsum", "cumprod", "cumsum"])
            self.assertEqual(spec["graph"][2].get("reverse"), True)


class ProdImports(unittest.TestCase):
    """torch.prod over a dim (KernelBench level 1, 50) imports as one prod op that matches PyTorch
    at fp64; a wrong op or dim is caught; the example optimizes on the simulator."""

    def test_each_spelling_matches_pytorch(self):
        for body in ["return torch.prod(x, dim=1)", "return x.prod(0, keepdim=True)",
                     "return torch.prod(x * 2, -1)"]:
            with self.subTest(body):
                # factors near 1: products of order 1, not underflowed to ~0
                spec, flag, line = util.import_body(body, "kb_prod",
                                                    inputs="torch.rand(batch_size, dim) + 0.5")
                self.assertIsNone(flag)
                self.assertIn("interpreter = PyTorch (fp64) at", line)
                self.assertIn("prod", [op["op"] for op in spec["graph"]])

    def test_wrong_op_or_dim_is_caught(self):
        # factors near 1 on [8, 64, 64]: over dim 2 the same shape, other values (with
        # KernelBench's randn at 256 factors every product is ~1e-70: a wrong dim reads the same)
        util.assert_tampering_caught(
            self, "return torch.prod(x, dim=1)", [("op", "sum"), ("axis", 2), ("op", "max")],
            "kb_prod", inputs="torch.rand(batch_size, dim, dim) + 0.5")

    def test_example_is_checked_and_optimizes_on_the_simulator(self):
        with tempfile.TemporaryDirectory() as d:
            spec, _ = util.import_example_and_optimize(self, "30_prod_reduction", d,
                                                       "--out", os.path.join(d, "best"))
            self.assertEqual([(op["op"], op["axis"]) for op in spec["graph"]], [("prod", 1)])
            with open(os.path.join(d, "best", "best.kf")) as f:
                self.assertIn("rowwise prod(", f.read())


class LossImports(unittest.TestCase):
    """Losses and the Frobenius norm (a reduction over every axis to one value, the Huber branch
    without a select, cosine similarity as row sums) match PyTorch at fp64, a wrong constant is
    caught, and the examples optimize on the simulator."""

    def assert_matches_pytorch(self, path):
        """Imports the module at `path` (then deletes it) and checks fp64 agreement < 1e-9."""
        try:
            loaded = kernelbench.load(path)
            spec, _ = spec_build.build(loaded, "kb_loss", "")
            flag, line = util.validate(spec, loaded, path)
        finally:
            os.unlink(path)
        self.assertIsNone(flag)
        worst = float(re.search(r"max \|diff\| (\S+)", line).group(1))
        self.assertLess(worst, 1e-9, line)

    def test_each_form_matches_pytorch(self):
        from test_fx_import import two_input_file
        for body in ["return F.smooth_l1_loss(p, t, beta=0.5)",
                     "return F.huber_loss(p * 2, t, delta=2.0)",
                     "return F.smooth_l1_loss(p, t, reduction='none')",
                     "return F.mse_loss(p, t, reduction='sum')",
                     "return F.l1_loss(p, t)",
                     "return torch.mean(1 - F.cosine_similarity(p, t, dim=0))",
                     "return p / torch.norm(t, p='fro')"]:
            with self.subTest(body):
                self.assert_matches_pytorch(two_input_file(body))

    def test_kl_div_matches_pytorch_with_zero_targets(self):
        from test_fx_import import two_input_file
        probs = "torch.randn(batch_size, dim).softmax(-1), "
        for body, target in [
                ("return F.kl_div(torch.log(p), t, reduction='batchmean')", "T.softmax(-1)"),
                ("return F.kl_div(torch.log(p), t, reduction='batchmean')", "torch.relu(T)"),
                ("return F.kl_div(torch.log(p), t, reduction='none')", "torch.relu(T)"),
                ("return F.kl_div(torch.log(p), t, reduction='sum')", "torch.relu(T)"),
                ("return F.kl_div(torch.log(p), t, reduction='mean')", "T.softmax(-1)"),
                ("return F.kl_div(p, t, reduction='batchmean', log_target=True)", "T")]:
            with self.subTest(body + " " + target):
                # relu: about half the targets are 0, where PyTorch's xlogy gives 0
                self.assert_matches_pytorch(two_input_file(body, inputs=probs + target.replace(
                    "T", "torch.randn(batch_size, dim)")))

    def test_kl_div_without_the_target_floor_is_caught(self):
        """log(0) * 0 is NaN where PyTorch gives 0: the floor is what makes zero targets agree."""
        from test_fx_import import two_input_file
        path = two_input_file("return F.kl_div(torch.log(p), t, reduction='sum')",
                              inputs="torch.rand(batch_size, dim) + 0.5, "
                                     "torch.relu(torch.randn(batch_size, dim))")
        try:
            loaded = kernelbench.load(path)
            spec, _ = spec_build.build(loaded, "kb_loss", "")
            next(o for o in spec["graph"] if o["op"] == "max_scalar")["value"] = 0.0
            with self.assertRaises(import_kernelbench.ImportFailed):
                util.validate(spec, loaded, path)
        finally:
            os.unlink(path)

    def test_wrong_huber_threshold_is_caught(self):
        path = util.example("26_huber_loss")
        loaded = kernelbench.load(path)
        spec, _ = spec_build.build(loaded, "kb_26_huber_loss", "")
        op = next(o for o in spec["graph"] if o["op"] == "min_scalar")
        op["value"] = 0.5
        with self.assertRaisesRegex(import_kernelbench.ImportFailed, "differ"):
            util.validate(spec, loaded, path)

    def test_examples_optimize_on_the_simulator(self):
        for stem, kernels in (("23_mse_loss", 3), ("26_huber_loss", 3),
                              ("27_cosine_similarity_loss", 6),
                              ("28_triplet_margin_loss", 4), ("29_kl_div_loss", 3)):
            with self.subTest(stem), tempfile.TemporaryDirectory() as d:
                status, line = util.example_batch().lines[stem]
                self.assertEqual(status, "ok", line)
                # checked at a smaller input_shape (a size tuple), not at 4096
                self.assertRegex(line, r"at batch_size=16,input_shape=32,")
                spec_path = util.example_batch().spec_path(stem)
                out = os.path.join(d, "best")
                r = util.kforge("optimize", spec_path, "--device", "sim", "--rounds", "1",
                                "--db", os.path.join(d, "k.db"), "--out", out)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                self.assertIn("synthesized one from the problem", r.stdout + r.stderr)
                with open(os.path.join(out, "best.kf")) as f:
                    program = f.read()
                # at most the kernels of the plan without a rowwise prologue (map, row
                # reductions, the one-block reduction to the scalar); fewer once fused
                self.assertLessEqual(program.count("kernel k"), kernels, program)
                # the last kernel reduces to the one value the module returns
                self.assertRegex(program, r"store \w+\[\] }\s*$")


class NumericCheckCatchesWrongMappings(unittest.TestCase):
    """validate() must fail when the spec does not compute what the module does."""

    def validate(self, stem, tamper):
        path = util.example(stem)
        loaded = kernelbench.load(path)
        spec, _ = spec_build.build(loaded, spec_build.problem_name(stem), "")
        tamper(spec)
        return util.validate(spec, loaded, path)

    def test_untampered_passes(self):
        flag, line = self.validate("12_activation_mix", lambda s: None)
        self.assertIsNone(flag)
        self.assertIn("interpreter = PyTorch", line)

    def test_wrong_activation_is_caught(self):
        def tamper(spec):
            spec["graph"][1]["negative_slope"] = 0.25
        with self.assertRaisesRegex(import_kernelbench.ImportFailed, "differ"):
            self.validate("12_activation_mix", tamper)

    def test_wrong_eps_is_caught(self):
        def tamper(spec):
            spec["graph"][0]["eps"] = 1e-2
        with self.assertRaisesRegex(import_kernelbench.ImportFailed, "differ"):
            self.validate("04_layer_norm", tamper)

    def test_wrong_transpose_is_caught(self):
        def tamper(spec):
            op = spec["graph"][0]
            op.pop("transpose_a")
            spec["inputs"]["A"]["shape"] = ["M", "K"]
        with self.assertRaisesRegex(import_kernelbench.ImportFailed, "differ"):
            self.validate("11_matmul_transposed", tamper)


if __name__ == "__main__":
    unittest.main()
