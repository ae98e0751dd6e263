"""torch.fx -> spec mapping on the example files and on small in-test modules: the ops, attrs,
params and named dims that each family produces, and the names of unsupported ops."""
import os
import tempfile
import textwrap
import unittest

import kforge_test_util as util
from kforge_py import kernelbench, spec_build
from kforge_py.fx_import import Unsupported


def spec_of(path):
    loaded = kernelbench.load(path)
    spec, _ = spec_build.build(loaded, "t", "")
    return spec


def ops(spec):
    return [op["op"] for op in spec["graph"]]


def module_file(body, globals_text="", inputs="torch.randn(batch_size, dim)", init="[]"):
    src = textwrap.dedent(f"""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
            def forward(self, x):
        {textwrap.indent(textwrap.dedent(body), ' ' * 8)}

        batch_size = 8
        dim = 64
        {globals_text}

        def get_inputs():
            return [{inputs}]

        def get_init_inputs():
            return {init}
        """)
    f = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
    f.write(src)
    f.close()
    return f.name


class ExampleSpecs(unittest.TestCase):
    def test_gemm_bias_relu_linear_weights_become_params(self):
        s = spec_of(util.example("01_gemm_bias_relu"))
        self.assertEqual(ops(s), ["linear", "relu"])
        # drawn at nn.Linear's default init, U(+-1/sqrt(in_features)) (fx_init)
        self.assertEqual(s["inputs"]["linear_weight"],
                         {"shape": ["out_features", "in_features"], "dtype": "f32", "param": True,
                          "distribution": "uniform_pm1", "fan_in": "in_features"})
        self.assertEqual(s["dims"], {"batch_size": 128, "in_features": 1024, "out_features": 512})
        self.assertEqual(s["precision"], {"policy": "fp32_strict"})

    def test_get_inputs_draws_become_the_spec_distributions(self):
        # kforge times on what get_inputs() draws: torch.rand is recorded, torch.randn is the
        # default (no key), anything else (a scaled draw, a parameter) stays the default
        s = spec_of(util.example("14_square_matmul"))  # torch.rand(N, N) twice
        self.assertEqual([e.get("distribution") for e in s["inputs"].values()],
                         ["uniform01", "uniform01"])
        s = spec_of(util.example("01_gemm_bias_relu"))  # torch.randn; the linear's params at
        # its init (fx_init)
        self.assertEqual([e.get("distribution") for e in s["inputs"].values()],
                         [None, "uniform_pm1", "uniform_pm1"])
        for meta in (True, False):  # traced on the meta device, as the importer does, or not
            loaded = kernelbench.load(module_file(
                "return x * 2", inputs="torch.rand(batch_size, dim).half().float()"), meta=meta)
            self.assertEqual(loaded.input_distributions, ["uniform01"])
            loaded = kernelbench.load(module_file(
                "return x * 2", inputs="torch.rand(batch_size, dim) * 2 - 1"), meta=meta)
            self.assertEqual(loaded.input_distributions, [None])

    def test_bmm_and_transposed_matmul(self):
        self.assertEqual(ops(spec_of(util.example("02_bmm"))), ["matmul"])
        s = spec_of(util.example("11_matmul_transposed"))
        self.assertEqual(s["graph"][0]["op"], "matmul")
        self.assertTrue(s["graph"][0]["transpose_a"])
        self.assertNotIn("transpose_b", s["graph"][0])

    def test_norms(self):
        ln = spec_of(util.example("04_layer_norm"))["graph"][0]
        self.assertEqual((ln["op"], ln["normalized_shape"]), ("layer_norm", ["features", "dim1"]))
        gn = spec_of(util.example("05_group_norm"))["graph"][0]
        self.assertEqual((gn["op"], gn["num_groups"], len(gn["inputs"])), ("group_norm", 8, 3))
        rms = spec_of(util.example("08_rms_norm_manual"))
        # written by hand (x * rsqrt(mean(x^2) + eps) * w): folded into one rms_norm with w
        self.assertEqual(ops(rms), ["rms_norm"])
        self.assertEqual(len(rms["graph"][0]["inputs"]), 2)
        self.assertEqual(rms["graph"][0]["eps"], 1e-6)

    def test_reductions_and_gelu_chain(self):
        r = spec_of(util.example("07_reductions"))
        self.assertEqual(ops(r), ["max", "mean", "sub", "logsumexp", "sum", "scale", "add"])
        g = spec_of(util.example("06_gemm_gelu_chain"))
        self.assertEqual([o.get("approximate") for o in g["graph"] if o["op"] == "gelu"],
                         ["tanh", "none"])
        self.assertEqual(g["graph"][-1], {"op": "add_scalar", "inputs": ["tanh"], "value": -0.5,
                                          "output": g["outputs"][0]})

    def test_scalar_forward_argument_becomes_a_constant(self):
        s = spec_of(util.example("13_matrix_scalar"))
        self.assertEqual(list(s["inputs"]), ["A"])
        self.assertEqual(s["graph"][0]["op"], "scale")
        self.assertEqual(s["graph"][0]["value"], 3.14)


class SmallModules(unittest.TestCase):
    def check(self, body, expect_ops, **kw):
        path = module_file(body, **kw)
        try:
            self.assertEqual(ops(spec_of(path)), expect_ops)
        finally:
            os.unlink(path)

    def unsupported(self, body, pattern, **kw):
        path = module_file(body, **kw)
        try:
            with self.assertRaisesRegex(Unsupported, pattern):
                spec_of(path)
        finally:
            os.unlink(path)

    def test_x_times_sigmoid_x_is_silu(self):
        self.check("return x * torch.sigmoid(x)", ["silu"])
        self.check("return torch.sigmoid(x) * x", ["silu"])
        # a sigmoid with another use stays
        self.check("return x * (s := torch.sigmoid(x)) + s", ["sigmoid", "mul", "add"])

    def test_hand_written_rms_norm_is_one_op(self):
        # KernelBench's RMSNorm by hand over the last dim: one row kernel, not three
        self.check("return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)", ["rms_norm"])
        self.check("return x / torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + 1e-5)",
                   ["rms_norm"])
        # over a dim that is not the last, or with the mean read again, the ops stay
        self.check("return x / torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + 1e-5)",
                   ["square", "mean", "add_scalar", "sqrt", "div"],
                   inputs="torch.randn(batch_size, dim, 4)")
        self.check("return x / torch.sqrt((m := torch.mean(x ** 2, dim=1, keepdim=True)) + 1e-5) + m",
                   ["square", "mean", "add_scalar", "sqrt", "div", "add"])

    def test_norms_and_hardsigmoid_become_spec_ops(self):
        # KernelBench's L2 / Frobenius / L1 norm and HardSigmoid, as ops the spec has
        self.check("return x / torch.norm(x, p='fro')", ["square", "sum", "sum", "sqrt", "div"])
        self.check("return torch.linalg.vector_norm(x, ord=1, dim=1)", ["abs", "sum"])
        self.check("return F.hardsigmoid(x)", ["scale", "add_scalar", "clamp"])
        # ELU family: max(0, x) + min(0, alpha (exp(x) - 1)), SELU scaled, CELU exp(x / alpha)
        self.check("return F.elu(x, alpha=0.5)",
                   ["relu", "exp", "add_scalar", "scale", "min_scalar", "add"])
        self.check("return torch.selu(x)",
                   ["relu", "exp", "add_scalar", "scale", "min_scalar", "add", "scale"])
        self.check("return F.celu(x, alpha=2.0)",
                   ["relu", "scale", "exp", "add_scalar", "scale", "min_scalar", "add"])
        self.unsupported("return torch.norm(x, p=3, dim=1)", "p = 3 is not supported")

    def test_l1_l2_normalization_is_one_op(self):
        # KernelBench level 1, 38 and 39, and F.normalize over the last dim: one row kernel
        def spec(body, **kw):
            path = module_file(body, **kw)
            try:
                return spec_of(path)
            finally:
                os.unlink(path)
        for body, kind, eps in [
                ("return x / torch.sum(torch.abs(x), dim=1, keepdim=True)", "l1_normalize", None),
                ("return x / torch.norm(x, p=2, dim=1, keepdim=True)", "l2_normalize", None),
                ("return x / torch.norm(x, p=1, dim=-1, keepdim=True)", "l1_normalize", None),
                ("return x / x.norm(dim=-1, keepdim=True).clamp_min(1e-8)", "l2_normalize", 1e-8),
                ("return F.normalize(x)", "l2_normalize", 1e-12),
                ("return F.normalize(x, p=1.0, dim=-1, eps=1e-6)", "l1_normalize", 1e-6),
                ("return F.normalize(x, 2, 1, 0.0)", "l2_normalize", None)]:
            with self.subTest(body):
                s = spec(body)
                self.assertEqual(ops(s), [kind])
                self.assertEqual(s["graph"][0]["axis"], -1)
                self.assertEqual(s["graph"][0].get("eps"), eps)
        # over a dim that is not the last, or with an intermediate read again, the ops stay
        self.check("return F.normalize(x, dim=1)", ["square", "sum", "sqrt", "max_scalar", "div"],
                   inputs="torch.randn(batch_size, dim, 4)")
        self.check("return x / torch.sum(torch.abs(x), dim=1, keepdim=True)", ["abs", "sum", "div"],
                   inputs="torch.randn(batch_size, dim, 4)")
        self.check("return x / (n := torch.norm(x, p=2, dim=1, keepdim=True)) + n",
                   ["square", "sum", "sqrt", "div", "add"])
        self.check("return x / torch.sum(a := torch.abs(x), dim=1, keepdim=True) + a",
                   ["abs", "sum", "div", "add"])
        # the norm of another tensor is not a normalization of x
        self.check("return x / torch.norm(x * 2, p=2, dim=1, keepdim=True)",
                   ["scale", "square", "sum", "sqrt", "div"])
        self.unsupported("return F.normalize(x, p=3)", "p = 3 is not supported")

    def test_cumsum_cumprod_and_reverse_scan_are_one_op(self):
        # KernelBench level 1, 89-91: cumsum, cumprod, and the reverse cumsum spelled with flips
        def spec(body, **kw):
            path = module_file(body, **kw)
            try:
                return spec_of(path)
            finally:
                os.unlink(path)
        for body, kind, axis, reverse in [
                ("return torch.cumsum(x, dim=1)", "cumsum", -1, None),
                ("return x.cumsum(-1)", "cumsum", -1, None),
                ("return torch.cumprod(x, 1)", "cumprod", -1, None),
                ("return torch.cumsum(x.flip(1), dim=1).flip(1)", "cumsum", -1, True),
                ("return torch.flip(torch.cumprod(torch.flip(x, [1]), 1), dims=(1,))", "cumprod",
                 -1, True),
                ("return torch.cumsum(x, dim=0)", "cumsum", -2, None)]:
            with self.subTest(body):
                s = spec(body)
                self.assertEqual(ops(s), [kind])
                self.assertEqual(s["graph"][0]["axis"], axis)
                self.assertEqual(s["graph"][0].get("reverse"), reverse)
        self.unsupported("return x.flip(1)", "flip is supported only around a scan")
        self.unsupported("return torch.cumsum(x.flip(1), dim=0)", "flipped along another dim")
        self.unsupported("return torch.cumsum(x, dim=1, dtype=torch.float64)", "dtype= is not")
        self.unsupported("return torch.cumsum(x.flip(1), dim=1)", "flip is supported only")

    def test_scalar_arithmetic(self):
        self.check("return (2.0 - x) * 3 / 4 + 1", ["neg", "add_scalar", "scale", "scale",
                                                     "add_scalar"])
        self.check("return x ** 3 + x ** 0.5", ["square", "mul", "sqrt", "add"])
        self.check("return torch.clamp_min(x, 0.1).clamp_max(0.5)", ["max_scalar", "min_scalar"])

    def test_multi_axis_reduction_becomes_a_chain(self):
        self.check("return x.sum(dim=(1, 2))", ["sum", "sum"],
                   inputs="torch.randn(batch_size, dim, 4)")

    def test_prod_over_a_dim_is_one_op(self):
        # KernelBench level 1, 50: torch.prod(x, dim=1); x.prod(..) and keepdim alike
        for body, axis, keepdim in [("return torch.prod(x, dim=1)", 1, False),
                                    ("return x.prod(-1, keepdim=True)", 2, True),
                                    ("return torch.prod(x, 0)", 0, False)]:
            with self.subTest(body):
                path = module_file(body, inputs="torch.randn(batch_size, dim, 4)")
                try:
                    s = spec_of(path)
                finally:
                    os.unlink(path)
                self.assertEqual(ops(s), ["prod"])
                self.assertEqual(s["graph"][0]["axis"], axis)
                self.assertEqual(s["graph"][0]["keepdim"], keepdim)

    def test_unsupported_ops_are_named(self):
        self.unsupported("return torch.nn.functional.pad(x, (1, 1), mode='replicate')",
                         r"^F.pad with mode 'replicate' is not supported")
        self.unsupported("return torch.atan(x)", r"^atan is not supported")
        self.unsupported("return x.argmax()", r"^argmax without dim")  # with a dim: issue 25
        self.unsupported("return x ** 4.5", "exponent 4.5")
        self.unsupported("return torch.max(x, dim=1)[1]", "indices")
        self.unsupported("return x[[0, 1]] + 1", r"indexing with list \(advanced indexing\)")

    def test_identity_model_is_refused(self):
        self.unsupported("return x.contiguous()", "returned unchanged|computes nothing")

    def test_dims_named_after_globals_or_by_value(self):
        path = module_file("return x * 2", inputs="torch.randn(batch_size, 40)")
        try:
            s = spec_of(path)
        finally:
            os.unlink(path)
        self.assertEqual(s["dims"], {"D40": 40, "batch_size": 8})
        self.assertEqual(s["inputs"]["x"]["shape"], ["batch_size", "D40"])

    def test_dims_named_after_size_tuples(self):
        # KernelBench's `input_shape = (4096,)`: the tuple's elements name dims (and can be
        # shrunk for the numeric check) like integer globals; several elements get _0, _1, ...
        for globals_text, inputs, dims, shape in [
                ("input_shape = (40,)", "torch.randn(batch_size, *input_shape)",
                 {"batch_size": 8, "input_shape": 40}, ["batch_size", "input_shape"]),
                ("spatial = (40, 24)", "torch.randn(batch_size, *spatial)",
                 {"batch_size": 8, "spatial_0": 40, "spatial_1": 24},
                 ["batch_size", "spatial_0", "spatial_1"]),
                ("input_shape = (8,)", "torch.randn(batch_size, *input_shape)",
                 {"batch_size": 8, "input_shape": 8}, ["batch_size", "input_shape"])]:
            with self.subTest(globals_text):
                path = module_file("return x * 2", globals_text=globals_text, inputs=inputs)
                try:
                    loaded = kernelbench.load(path)
                    s = spec_of(path)
                    small = kernelbench.load(path, overrides={"input_shape": 16, "spatial_1": 16})
                finally:
                    os.unlink(path)
                self.assertEqual(s["dims"], dims)
                self.assertEqual(s["inputs"]["x"]["shape"], shape)
                self.assertEqual(loaded.literal_ints["batch_size"], 8)
                self.assertEqual(tuple(small.inputs[0].shape)[1:],
                                 (16,) if "input_shape" in globals_text else (40, 16))


def spec_of_source(src):
    f = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
    f.write(textwrap.dedent(src))
    f.close()
    try:
        return spec_of(f.name)
    finally:
        os.unlink(f.name)


def two_input_file(body, inputs="torch.randn(batch_size, dim), torch.randn(batch_size, dim)"):
    """A module file whose forward reads (p, t), like KernelBench's losses."""
    path = module_file("pass", inputs=inputs)
    with open(path) as f:
        src = f.read()
    src = src.replace("def forward(self, x):\n        pass",
                      "def forward(self, p, t):\n        " + body)
    with open(path, "w") as f:
        f.write(src)
    return path


class LossModules(unittest.TestCase):
    """KernelBench's losses (level 1, 94-100) and the Frobenius norm: element-wise ops the spec
    has, then a reduction over every axis as a chain of one-axis reductions to one value."""

    def spec(self, body, **kw):
        path = two_input_file(body, **kw)
        try:
            return spec_of(path)
        finally:
            os.unlink(path)

    def unsupported(self, body, pattern, **kw):
        path = two_input_file(body, **kw)
        try:
            with self.assertRaisesRegex(Unsupported, pattern):
                spec_of(path)
        finally:
            os.unlink(path)

    def test_mean_over_all_elements_is_a_chain_to_a_scalar(self):
        s = self.spec("return torch.mean((p - t) ** 2)")
        self.assertEqual(ops(s), ["sub", "square", "mean", "mean"])
        self.assertEqual([op["axis"] for op in s["graph"][2:]], [1, 0])
        self.assertEqual(s["outputs"], [s["graph"][-1]["output"]])
        # hinge: targets of shape [batch, 1] broadcast
        s = self.spec("return torch.mean(torch.clamp(1 - p * t, min=0))",
                      inputs="torch.randn(batch_size, dim), torch.randn(batch_size, 1)")
        self.assertEqual(ops(s), ["mul", "neg", "add_scalar", "clamp", "mean", "mean"])
        self.assertEqual(s["inputs"]["t"]["shape"], ["batch_size", 1])

    def test_functional_losses(self):
        huber = ["sub", "abs", "min_scalar", "square", "scale", "sub", "add"]
        for body, expect, scales in [
                ("return F.mse_loss(p, t)", ["sub", "square", "mean", "mean"], []),
                ("return F.l1_loss(p, t, reduction='sum')", ["sub", "abs", "sum", "sum"], []),
                ("return F.smooth_l1_loss(p, t)", huber + ["mean", "mean"], [0.5]),
                ("return F.smooth_l1_loss(p, t, beta=0.5)", huber + ["mean", "mean"], [1.0]),
                ("return F.smooth_l1_loss(p, t, beta=0.0)", ["sub", "abs", "mean", "mean"], []),
                ("return F.huber_loss(p, t, delta=2.0)",
                 huber[:6] + ["scale", "add", "mean", "mean"], [0.5, 2.0]),
                ("return F.smooth_l1_loss(p, t, reduction='none')", huber, [0.5])]:
            with self.subTest(body):
                s = self.spec(body)
                self.assertEqual(ops(s), expect)
                self.assertEqual([op["value"] for op in s["graph"] if op["op"] == "scale"],
                                 scales)
                if "min_scalar" in expect:
                    k = 0.5 if "beta=0.5" in body else 2.0 if "delta" in body else 1.0
                    self.assertEqual(s["graph"][2]["value"], k)

    def test_cosine_similarity_is_three_row_sums(self):
        s = self.spec("return torch.mean(1 - F.cosine_similarity(p, t, dim=1))")
        self.assertEqual(sorted(ops(s)), sorted(
            ["mul", "sum", "square", "sum", "sqrt", "max_scalar", "square", "sum", "sqrt",
             "max_scalar", "mul", "div", "neg", "add_scalar", "mean"]))
        self.assertEqual({op["axis"] for op in s["graph"] if op["op"] == "sum"}, {1})
        self.assertEqual({op["value"] for op in s["graph"] if op["op"] == "max_scalar"}, {1e-8})

    def test_loss_modules_take_their_settings(self):
        src = textwrap.dedent("""
            import torch
            import torch.nn as nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.huber = nn.HuberLoss(delta=2.0, reduction="sum")
                    self.mse = nn.MSELoss()
                    self.cos = nn.CosineSimilarity(dim=0, eps=1e-6)
                    self.triplet = nn.TripletMarginLoss(margin=0.5)
                def forward(self, a, p, n):
                    return self.huber(a, p), self.mse(a, n), self.cos(a, p), self.triplet(a, p, n)

            def get_inputs():
                return [torch.randn(8, 64), torch.randn(8, 64), torch.randn(8, 64)]

            def get_init_inputs():
                return []
            """)
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write(src)
        try:
            s = spec_of(f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual(len(s["outputs"]), 4)
        by_out = {op["output"]: op for op in s["graph"]}
        self.assertEqual(by_out[s["outputs"][0]]["op"], "sum")   # reduction="sum"
        self.assertEqual(by_out[s["outputs"][1]]["op"], "mean")
        self.assertEqual(by_out[s["outputs"][2]]["op"], "div")   # no reduction
        values = [(op["op"], op.get("value")) for op in s["graph"]]
        self.assertIn(("min_scalar", 2.0), values)               # delta
        self.assertIn(("max_scalar", 1e-6), values)              # cosine eps
        self.assertIn(("add_scalar", 0.5), values)               # triplet margin
        self.assertIn(("add_scalar", 1e-6), values)              # pairwise distance eps
        self.assertEqual({op["axis"] for op in s["graph"] if op["op"] == "sum" and
                          op["output"] != s["outputs"][0] and "cos" in op["output"]}, {0})

    def test_kl_div_is_a_row_sum_then_a_batch_mean(self):
        probs = "torch.randn(batch_size, dim).softmax(-1), torch.randn(batch_size, dim).softmax(-1)"
        xlogy = ["log", "max_scalar", "log", "sub", "mul"]
        for body, expect in [
                ("return F.kl_div(torch.log(p), t, reduction='batchmean')",
                 xlogy + ["sum", "mean"]),
                ("return F.kl_div(torch.log(p), t, reduction='sum')", xlogy + ["sum", "sum"]),
                ("return F.kl_div(torch.log(p), t)", xlogy + ["mean", "mean"]),
                ("return F.kl_div(torch.log(p), t, reduction='none')", xlogy),
                ("return F.kl_div(p, t, reduction='batchmean', log_target=True)",
                 ["sub", "exp", "mul", "sum", "mean"])]:
            with self.subTest(body):
                s = self.spec(body, inputs=probs)
                self.assertEqual(ops(s), expect)
                self.assertEqual(s["outputs"], [s["graph"][-1]["output"]])
                if "batchmean" in body:  # sum over the row, mean over the (symbolic) batch
                    self.assertEqual([op["axis"] for op in s["graph"][-2:]], [1, 0])
                if "max_scalar" in expect:  # target 0 gives 0 (xlogy), not 0 * log(0)
                    self.assertEqual(s["graph"][1]["value"], 1e-30)
        # the module form takes its reduction and log_target
        path = two_input_file("return self.kl(p, t)", inputs=probs)
        with open(path) as f:
            src = f.read()
        with open(path, "w") as f:
            f.write(src.replace("super().__init__()", "super().__init__()\n        self.kl = "
                                "nn.KLDivLoss(reduction='sum', log_target=True)", 1))
        try:
            s = spec_of(path)
        finally:
            os.unlink(path)
        self.assertEqual(ops(s), ["sub", "exp", "mul", "sum", "sum"])

    def test_unsupported_forms_are_named(self):
        self.unsupported("return F.kl_div(p, t, reduction='batchmean')", "batchmean",
                         inputs="torch.randn(1, dim), torch.randn(batch_size, dim)")
        self.unsupported("return torch.prod(p) + t.sum()", r"^prod without dim")
        self.unsupported("return torch.prod(p, 1, dtype=torch.float64)", "prod with a dtype")
        # a bool mask times a tensor, then a scan: imported since issue 25 (bool inputs)
        self.assertEqual(ops(self.spec("return torch.cumsum(p * t, dim=1)",
                                       inputs="torch.randn(batch_size, dim), "
                                              "torch.randn(batch_size, dim) > 0")),
                         ["mul", "cumsum"])
        self.unsupported("return F.cosine_similarity(p, t)", "broadcast operands",
                         inputs="torch.randn(batch_size, dim), torch.randn(1, dim)")
        self.unsupported("return F.mse_loss(p, t, weight=t)", "with a weight is not supported")
        self.unsupported("return F.smooth_l1_loss(p, t, beta=-1.0)", "beta = -1.0 is not")
        self.unsupported("return F.triplet_margin_loss(p, t, t, p=1)", "p = 1 is not supported")
        self.unsupported("return F.triplet_margin_loss(p, t, t, swap=True)", "swap=True")


class DimsFromOps(unittest.TestCase):
    """Axes share a dim only where an op makes them one (spec_dims.py), not because their sizes
    are equal: KernelBench's square matmul A[N, N] @ B[N, N] had one name for all three dims."""

    @staticmethod
    def matmul_spec(globals_text, a, b):
        """The spec of a module returning torch.matmul(A, B) on inputs made by `a` and `b`."""
        return spec_of_source(f"""
            import torch
            import torch.nn as nn
            class Model(nn.Module):
                def forward(self, A, B):
                    return torch.matmul(A, B)
            {globals_text}
            def get_inputs():
                return [{a}, {b}]
            def get_init_inputs():
                return []
            """)

    def test_square_matmul_contracts_one_dim(self):
        s = self.matmul_spec("N = 64", "torch.rand(N, N)", "torch.rand(N, N)")
        self.assertEqual(s["dims"], {"N": 64, "N_1": 64, "N_2": 64})
        self.assertEqual(s["inputs"]["A"]["shape"], ["N", "N_1"])
        self.assertEqual(s["inputs"]["B"]["shape"], ["N_1", "N_2"])

    def test_matrix_vector_product_keeps_its_n_of_one(self):
        s = self.matmul_spec("M = 32; K = 64", "torch.randn(M, K)", "torch.randn(K, 1)")
        self.assertEqual(s["dims"], {"M": 32, "K": 64, "D1": 1})
        self.assertEqual(s["inputs"]["B"]["shape"], ["K", "D1"])

    def test_linear_with_equal_in_and_out_features(self):
        s = spec_of_source("""
            import torch
            import torch.nn as nn
            class Model(nn.Module):
                def __init__(self, in_features, out_features):
                    super().__init__()
                    self.linear = nn.Linear(in_features, out_features)
                def forward(self, x, r):
                    return torch.relu(self.linear(x)) + r
            batch_size = 8
            in_features = 64
            out_features = 64
            def get_inputs():
                return [torch.randn(batch_size, in_features), torch.randn(batch_size, out_features)]
            def get_init_inputs():
                return [in_features, out_features]
            """)
        self.assertEqual(s["dims"], {"batch_size": 8, "in_features": 64, "out_features": 64})
        self.assertEqual(s["inputs"]["x"]["shape"], ["batch_size", "in_features"])
        self.assertEqual(s["inputs"]["linear_weight"]["shape"], ["out_features", "in_features"])
        self.assertEqual(s["inputs"]["linear_bias"]["shape"], ["out_features"])
        # the residual is added to the linear's output: its last dim is N, not K
        self.assertEqual(s["inputs"]["r"]["shape"], ["batch_size", "out_features"])

    def test_norm_weight_and_elementwise_operands_share_the_dims(self):
        s = spec_of_source("""
            import torch
            import torch.nn as nn
            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.ln = nn.LayerNorm(dim)
                def forward(self, x, y):
                    return self.ln(x * y)
            batch_size = 64
            dim = 64
            def get_inputs():
                return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]
            def get_init_inputs():
                return []
            """)
        self.assertEqual(s["dims"], {"batch_size": 64, "dim": 64})
        self.assertEqual(s["inputs"]["y"]["shape"], ["batch_size", "dim"])
        self.assertEqual(s["inputs"]["ln_weight"]["shape"], ["dim"])
        ln = [op for op in s["graph"] if op["op"] == "layer_norm"][0]
        self.assertEqual(ln["normalized_shape"], ["dim"])


if __name__ == "__main__":
    unittest.main()
