"""torch.einsum and torch.diag(v) @ B imported as the spec ops they equal
(python/kforge_py/fx_forms.py, fx_einsum.py): each form matches its module through the fp64
interpreter, and an equation or a diag the spec cannot write is refused by name."""
import os
import re
import tempfile
import textwrap
import unittest

import kforge_test_util as util


def module_file(body, inputs):
    """A KernelBench-format file whose forward(A, B, ...) is `body`, inputs made by `inputs`
    (torch expressions, one per argument)."""
    names = "ABCD"[:len(inputs)]
    src = textwrap.dedent(f"""
        import torch
        import torch.nn as nn

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
            def forward(self, {", ".join(names)}):
                {body}

        def get_inputs():
            return [{", ".join(inputs)}]

        def get_init_inputs():
            return []
        """)
    f = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
    f.write(src)
    f.close()
    return f.name


def spec_and_check(body, inputs):
    """(spec, worst |diff| against PyTorch at fp64) of the module."""
    from kforge_py import kernelbench, spec_build
    path = module_file(body, inputs)
    try:
        loaded = kernelbench.load(path)
        spec, _ = spec_build.build(loaded, "kb_forms", "")
        flag, line = util.validate(spec, loaded, path)
    finally:
        os.unlink(path)
    if flag is not None:
        raise AssertionError(f"degenerate: {flag}")
    return spec, float(re.search(r"max \|diff\| (\S+)", line).group(1))


def ein(eq, *shapes):
    return (f"return torch.einsum('{eq}', {', '.join('ABCD'[:len(shapes)])})",
            [f"torch.randn{s}" for s in shapes])


class Einsum(unittest.TestCase):
    def test_each_equation_matches_pytorch(self):
        # (body, inputs) -> the ops (with their transposes) it must become
        mm = {"op": "matmul"}
        cases = [
            (ein("bijl,lk->bijk", (2, 3, 4, 5), (5, 6)), [mm]),
            (ein("ij,jk->ik", (4, 5), (5, 6)), [mm]),
            (ein("ij,jk", (4, 5), (5, 6)), [mm]),
            (ein("bij,bjk->bik", (2, 4, 5), (2, 5, 6)), [mm]),
            (ein("bik,bkj->bij", (2, 4, 5), (2, 5, 6)), [mm]),
            (ein("ik,jk->ij", (4, 5), (6, 5)), [{"op": "matmul", "transpose_b": True}]),
            (ein("ki,kj->ij", (5, 4), (5, 6)), [{"op": "matmul", "transpose_a": True}]),
            # the result transposed: B^T A^T, the operands swapped
            (ein("ij,jk->ki", (4, 5), (5, 6)),
             [{"op": "matmul", "transpose_a": True, "transpose_b": True}]),
            (ein("...ij,jk->...ik", (2, 3, 4, 5), (5, 6)), [mm]),
            # b occurs in A only and not in the result: summed first
            (ein("bij,jk->ik", (3, 4, 5), (5, 6)), [{"op": "sum"}, mm]),
            (ein("ij,ij->ij", (4, 5), (4, 5)), [{"op": "mul"}]),
            (ein("bij,j->bij", (2, 4, 5), (5,)), [{"op": "mul"}]),
            (ein("ij->i", (4, 5)), [{"op": "sum", "axis": 1}]),
            (ein("bij->b", (2, 4, 5)), [{"op": "sum"}, {"op": "sum"}]),
            (ein("ij->", (4, 5)), [{"op": "sum"}, {"op": "sum"}]),
            (("return torch.einsum('ij->ji', A) @ B", ["torch.randn(5, 4)", "torch.randn(5, 6)"]),
             [{"op": "matmul", "transpose_a": True}]),
            (("return torch.einsum('ij,jk->ik', [A, B]).relu()",
              ["torch.randn(4, 5)", "torch.randn(5, 6)"]), [mm, {"op": "relu"}]),
        ]
        for (body, inputs), expected in cases:
            with self.subTest(body):
                spec, worst = spec_and_check(body, inputs)
                got = spec["graph"]
                self.assertEqual(len(got), len(expected), got)
                for op, want in zip(got, expected):
                    self.assertEqual({k: op.get(k) for k in want}, want, got)
                    if op["op"] == "matmul":  # no transpose unless asked for
                        for t in ("transpose_a", "transpose_b"):
                            self.assertEqual(op.get(t, False), want.get(t, False), got)
                self.assertLess(worst, 1e-9, body)

    def test_equations_with_permutes_reshapes_and_several_operands_match_pytorch(self):
        # (body, inputs) -> ops the lowering must (and must not) use
        for (body, inputs), must, must_not in [
                (ein("ij,jk,kl->il", (2, 3), (3, 4), (4, 5)), {"matmul"}, set()),
                (ein("i,j->ij", (4,), (5,)), {"mul"}, {"matmul"}),
                (ein("bij,bj->bij", (2, 4, 5), (2, 5)), {"mul"}, {"matmul"}),
                (ein("ijk,jkl->il", (2, 3, 4), (3, 4, 5)), {"matmul", "reshape"}, set()),
                (ein("ij,j->i", (4, 5), (5,)), {"matmul"}, set()),
                (ein("bij,bjk->ibk", (2, 3, 4), (2, 4, 5)), {"matmul", "permute"}, set()),
                (ein("bij,jbk->bik", (2, 3, 4), (4, 2, 5)), {"matmul", "permute"}, set()),
                (ein("bij,cjk->bcik", (2, 3, 4), (3, 4, 5)), {"matmul"}, set()),
                (ein("ijk->kji", (2, 3, 4)), {"permute"}, {"matmul"}),
                # a chunked scan's contractions: four and three operands, every index permuted
                (ein("bclhn,bcshn,bhcls,bcshp->bclhp", (2, 2, 3, 2, 4), (2, 2, 3, 2, 4),
                     (2, 2, 2, 3, 3), (2, 2, 3, 2, 5)), {"matmul", "mul", "permute"}, set()),
                (ein("bclhn,bhcl,bclhp->bchpn", (2, 2, 3, 2, 4), (2, 2, 2, 3), (2, 2, 3, 2, 5)),
                 {"matmul", "mul"}, set()),
                # p, a second free index of B: a broadcast batch dim of the matmul, no split
                (ein("bhzc,bchpn->bzhpn", (2, 2, 3, 3), (2, 3, 2, 4, 5)),
                 {"matmul", "permute"}, {"reshape"})]:
            with self.subTest(body):
                spec, worst = spec_and_check(body, inputs)
                ops = {o["op"] for o in spec["graph"]}
                self.assertLessEqual(must, ops, spec["graph"])
                self.assertFalse(must_not & ops, spec["graph"])
                self.assertLess(worst, 1e-9, body)

    def test_what_the_spec_cannot_write_is_refused_with_the_equation(self):
        for (body, inputs), pattern in [
                (ein("ii->i", (4, 4)), "'ii->i' repeats an index"),
                (ein("ij,jj->ij", (4, 4), (4, 4)), "'ij,jj->ij' repeats an index"),
                (ein("ij,kj->ik", (4, 1), (3, 5)), "'ij,kj->ik' broadcasts a size-1 axis"),
                (("return torch.einsum(A, [0, 1], B, [1, 2])",
                  ["torch.randn(4, 5)", "torch.randn(5, 6)"]), "sublist format")]:
            with self.subTest(body):
                util.assert_build_refused(self, module_file(body, inputs), "kb_forms", pattern)


class ChunkedScan(unittest.TestCase):
    def test_a_chunked_scan_imports_checked_at_reduced_sizes(self):
        # fixtures/networks/chunked_scan_einsum.py: einsums of four and three operands, a
        # causal mask made in forward() (fed from the trace at the reduced sizes), the sequence
        # split into chunks (an unnamed chunk axis kept through a reshape as -1), and a mask
        # [chunk, chunk] broadcast against an axis of the same size as another dim
        out, spec = util.import_fixture(self, "chunked_scan_einsum")
        self.assertIn("reduced sizes", out)
        ops = [o["op"] for o in spec["graph"]]
        self.assertNotIn("einsum", ops)
        self.assertGreaterEqual(ops.count("matmul"), 4, ops)
        views = [o["shape"] for o in spec["graph"] if o["op"] == "reshape"]
        # the chunk count is no dim (by value it was n_heads: the mask joined the axes of 4)
        self.assertEqual(views[0], ["batch_size", -1, "chunk", "n_heads"], views)


class DiagMatmul(unittest.TestCase):
    def test_diag_as_a_matmul_operand_is_a_broadcast_mul(self):
        for body, inputs, a_shape in [
                ("return torch.diag(A) @ B", ["torch.randn(6)", "torch.randn(6, 5)"], [6, 1]),
                ("return torch.matmul(torch.diag(A), B)", ["torch.randn(6)",
                                                           "torch.randn(3, 6, 5)"], [6, 1]),
                ("return torch.diag(A) @ B", ["torch.randn(6)", "torch.randn(6)"], [6]),
                ("return B @ torch.diag(A)", ["torch.randn(6)", "torch.randn(5, 6)"], [6]),
                ("return torch.mm(B, A.diag()).relu()", ["torch.randn(6)", "torch.randn(5, 6)"],
                 [6]),
                ("return B @ torch.diag(torch.tanh(A))", ["torch.randn(6)",
                                                          "torch.randn(5, 6)"], [6])]:
            with self.subTest(body):
                spec, worst = spec_and_check(body, inputs)
                self.assertIn("mul", [o["op"] for o in spec["graph"]])
                self.assertNotIn("matmul", [o["op"] for o in spec["graph"]])
                got = [s if isinstance(s, int) else spec["dims"][s]
                       for s in spec["inputs"]["A"]["shape"]]
                self.assertEqual(got, a_shape)
                self.assertLess(worst, 1e-9, body)

    def test_diag_read_otherwise_is_refused_by_name(self):
        vec = ["torch.randn(6)", "torch.randn(6, 6)"]
        for body, inputs, pattern in [
                ("return torch.diag(A)", vec[:1], "diag\\(v\\) .*only as one operand of a matmul"),
                ("return torch.diag(A) + B", vec, "diag\\(v\\) .*only as one operand of a matmul"),
                ("return torch.diag(A) @ torch.diag(A)", vec[:1], "diag\\(u\\) @ diag\\(v\\)"),
                ("return torch.diag(B) @ B", vec, "diag of a tensor of shape \\[6, 6\\]"),
                ("return torch.diag(A, 1) @ B", ["torch.randn(5)", "torch.randn(6, 6)"],
                 "diag with diagonal offset 1"),
                ("return torch.diag(torch.relu(A)) @ B", vec, "needs v as a column"),
                ("return torch.diag(A) @ B + A", vec, "needs v as a column")]:
            with self.subTest(body):
                util.assert_build_refused(self, module_file(body, inputs), "kb_forms", pattern)


if __name__ == "__main__":
    unittest.main()
