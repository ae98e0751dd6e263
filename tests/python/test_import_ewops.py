"""torch.erf, log1p, expm1, sin, cos, sign, reciprocal (and a number divided by a tensor) and the
element-wise maximum / minimum of two tensors (torch.maximum, torch.max(a, b), broadcast like
add; against zeros_like a clamp) import as the spec ops of those names and match PyTorch at fp64
through the interpreter; example 32 imports, checks and optimizes on the simulator."""
import re
import tempfile
import unittest

import kforge_test_util as util
from test_fx_import import module_file


def ops(spec):
    return [o["op"] for o in spec["graph"]]


class ElementwiseMath(unittest.TestCase):
    def test_every_function_matches_pytorch(self):
        body = "; ".join([  # one line: module_file indents only the first line of a body
            "m = x.mean(dim=1, keepdim=True)",
            "a = torch.maximum(x, m) + torch.min(x, torch.sin(x)) - torch.max(torch.cos(x), m)",
            "b = torch.erf(a) + torch.log1p(torch.abs(a)) - torch.expm1(-torch.abs(x))",
            "c = torch.sign(x) * b + 1 / (2 + b * b) + 3.0 / (1 + x * x)",
            "d = torch.maximum(c, torch.zeros_like(c)) + x.cos().sin() * torch.reciprocal(2 + b.abs())",
            "return d - torch.minimum(torch.ones_like(x), a.abs().log1p())"])
        spec, flag, line = util.import_body(body, "kb_ewops")
        self.assertIsNone(flag, line)
        got = ops(spec)
        for op in ("maximum", "minimum", "erf", "log1p", "expm1", "sin", "cos", "sign",
                   "reciprocal", "max_scalar", "min_scalar"):
            self.assertIn(op, got)
        # torch.max(x, m): m is [batch, 1], broadcast like add
        first = next(o for o in spec["graph"] if o["op"] == "maximum")
        self.assertEqual(len(first["inputs"]), 2)
        worst = float(re.search(r"max \|diff\| (\S+)", line).group(1))
        self.assertLess(worst, 1e-9, line)

    def test_a_wrong_op_is_caught(self):
        util.assert_tampering_caught(self, "return torch.erf(x) + torch.maximum(x, x.sin())",
                                     [("op", "sin")], "kb_ewops_tamper")

    def test_nan_ignoring_and_broadcasting_constants_are_refused(self):
        for body, pattern in [
                ("return torch.fmax(x, torch.sin(x))", "fmax of two tensors"),
                ("return torch.maximum(x.mean(1, keepdim=True), torch.zeros_like(x))",
                 "constant of shape"),
                ("return torch.zeros_like(x)", "expected a tensor")]:
            with self.subTest(body):
                util.assert_build_refused(self, module_file(body), "kb_ewops", pattern)

    def test_example_imports_checks_and_optimizes_on_the_simulator(self):
        with tempfile.TemporaryDirectory() as d:
            spec, out = util.import_example_and_optimize(self, "32_elementwise_math", d)
            got = ops(spec)
            for op in ("linear", "maximum", "sign", "log1p", "erf", "cos", "sin", "expm1",
                       "min_scalar", "reciprocal"):
                self.assertIn(op, got)


if __name__ == "__main__":
    unittest.main()
