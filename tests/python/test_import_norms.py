"""Batch, instance and layer norm imports (python/kforge_py/fx_decomp.py): BatchNorm1d/2d/3d and
F.batch_norm in training mode (batch statistics: how KernelBench runs a fresh module) and with
running statistics; InstanceNorm1d/2d/3d and F.instance_norm as layer_norm over the spatial dims;
LayerNorm over several trailing dims. Each matches PyTorch through the fp64 interpreter, a
tampered spec is caught, what cannot be written is refused by name, and the batch norm example
plans and compiles on the simulator."""
import os
import re
import tempfile
import textwrap
import unittest

import kforge_test_util as util
from kforge_py import kernelbench, spec_build


def norm_module(init, body, shape="batch_size, features, dim1, dim2"):
    """A KernelBench file whose Model.__init__ runs `init` and forward(x) `body`."""
    src = textwrap.dedent("""\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
        {init}
            def forward(self, x):
        {body}

        batch_size = 8
        features = 48
        dim1 = 40
        dim2 = 36

        def get_inputs():
            return [torch.randn({shape}) * 3 + 1]

        def get_init_inputs():
            return []
        """).format(init=textwrap.indent(init or "pass", " " * 8),
                    body=textwrap.indent(body, " " * 8), shape=shape)
    f = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
    f.write(src)
    f.close()
    return f.name


# per-channel parameters and buffers that differ from the fresh 1 / 0 (so that a weight, bias
# or running statistic read wrongly shows)
PARAMS = ("self.w = nn.Parameter(torch.rand(features) + 0.5)\n"
          "self.b = nn.Parameter(torch.randn(features))\n"
          "self.register_buffer('rm', torch.randn(features))\n"
          "self.register_buffer('rv', torch.rand(features) + 0.5)")


def import_checked(test, init, body, **kw):
    """(spec, worst |diff|) of the module, checked against PyTorch at fp64 (shrunk)."""
    path = norm_module(init, body, **kw)
    try:
        loaded = kernelbench.load(path)
        spec, _ = spec_build.build(loaded, "kb_norm", "")
        flag, line = util.validate(spec, loaded, path)
    finally:
        os.unlink(path)
    test.assertIsNone(flag, line)
    test.assertIn("interpreter = PyTorch (fp64) at", line)
    test.assertNotIn("dim1=40", line, "checked at the full size, not shrunk")
    return spec, float(re.search(r"max \|diff\| (\S+)", line).group(1))


def ops(spec):
    return [o["op"] for o in spec["graph"]]


BN_TRAIN = ["mean", "mean", "mean", "sub", "square", "mean", "mean", "mean", "sub",
            "add_scalar", "rsqrt", "mul", "mul", "add"]


class NormImports(unittest.TestCase):
    def test_each_form_matches_pytorch(self):
        rank3 = {"shape": "batch_size, features, dim1"}
        cases = [  # (init, forward, the ops, the per-channel input shapes, options)
            ("self.bn = nn.BatchNorm2d(features)", "return self.bn(x)", BN_TRAIN,
             {"bn_weight": ["features", 1, 1], "bn_bias": ["features", 1, 1]}, {}),
            ("self.bn = nn.BatchNorm1d(features, eps=1e-3, affine=False)", "return self.bn(x)",
             ["mean", "sub", "square", "mean", "sub", "add_scalar", "rsqrt", "mul"], {},
             {"shape": "batch_size, features"}),
            ("self.bn = nn.BatchNorm3d(features, track_running_stats=False)",
             "return self.bn(x)", None, {"bn_weight": ["features", 1, 1, 1]},
             {"shape": "batch_size, features, 3, dim1, 5"}),
            (PARAMS, "return F.batch_norm(x, self.rm, self.rv, self.w, self.b, training=True, "
             "eps=1e-4)", BN_TRAIN, {"w": ["features", 1, 1], "b": ["features", 1, 1]}, {}),
            (PARAMS, "return F.batch_norm(x, self.rm, self.rv, self.w, self.b, False, 0.1, 0.01)",
             ["sub", "add_scalar", "rsqrt", "mul", "mul", "add"],
             {"rm": ["features", 1], "rv": ["features", 1], "w": ["features", 1]}, rank3),
            ("self.n = nn.InstanceNorm2d(features)", "return self.n(x)", ["layer_norm"], {}, {}),
            ("self.n = nn.InstanceNorm1d(features, affine=True, eps=1e-3)", "return self.n(x)",
             ["layer_norm", "mul", "add"], {"n_weight": ["features", 1]}, rank3),
            (PARAMS, "return F.instance_norm(x, weight=self.w, bias=self.b)",
             ["layer_norm", "mul", "add"], {"w": ["features", 1, 1]}, {}),
            ("self.ln = nn.LayerNorm((features, dim1, dim2))", "return self.ln(x)",
             ["layer_norm"], {"ln_weight": ["features", "dim1", "dim2"]}, {}),
            ("self.w = nn.Parameter(torch.rand(dim1, dim2) + 0.5)",
             "return F.layer_norm(x, (dim1, dim2), self.w, None, 1e-3)", ["layer_norm"],
             {"w": ["dim1", "dim2"]}, {}),
        ]
        for init, body, expected, shapes, kw in cases:
            with self.subTest(f"{init.splitlines()[0]}: {body}"):
                spec, worst = import_checked(self, init, body, **kw)
                if expected is not None:
                    self.assertEqual(ops(spec), expected)
                for name, shape in shapes.items():
                    self.assertEqual(spec["inputs"][name]["shape"], shape)
                # running statistics are inputs only where they are read (eval mode)
                self.assertEqual("rm" in spec["inputs"], "False" in body, list(spec["inputs"]))
                self.assertLess(worst, 1e-9)

    def test_wrong_dims_or_eps_are_caught(self):
        # the first op: batch norm's mean over the last dim, instance norm's layer_norm
        util.assert_tampering_caught(
            self, "return F.batch_norm(x, None, None, training=True, eps=0.5)",
            [("axis", 1), ("op", "max")], "kb_norm",
            inputs="torch.randn(batch_size, dim, 5) * 3 + 1")
        util.assert_tampering_caught(
            self, "return F.instance_norm(x, eps=1e-5)",
            [("eps", 10.0), ("normalized_shape", [5])], "kb_norm",
            inputs="torch.randn(batch_size, dim, 4, 5) * 3 + 1")

    def test_what_the_spec_cannot_write_is_refused_by_name(self):
        for init, body, pattern in [
                ("", "return F.batch_norm(x, None, None, x.mean((0, 2, 3)), training=True)",
                 "not a module parameter or buffer"),
                (PARAMS, "return F.instance_norm(x, self.rm, self.rv, use_input_stats=False)",
                 "use_input_stats=False")]:
            with self.subTest(body):
                util.assert_build_refused(self, norm_module(init, body), "kb_norm", pattern)

    def test_batchnorm_example_is_checked_shrunk_and_optimizes_on_the_simulator(self):
        with tempfile.TemporaryDirectory() as d:
            spec, out = util.import_example_and_optimize(self, "33_batchnorm", d)
            self.assertNotIn("dim1=256", out)  # checked at a shrunk instance
            self.assertEqual(ops(spec), BN_TRAIN)


if __name__ == "__main__":
    unittest.main()
