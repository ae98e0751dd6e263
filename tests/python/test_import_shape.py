"""Shape code in forward -> the spec's shape ops (python/kforge_py/fx_shape.py): the spec each
example gives (views as reshape / expand with named target shapes, slices with negative ends,
cat with a zeros piece as a pad), every example's spec through `kforge interpret` (fp64) equal
to PyTorch (fp64) and through spec_torch (the baselines' module), re-binding at reduced sizes,
and the refusals: a reshape whose sizes do not match, an out-of-range index or narrow,
advanced indexing, a non-constant pad."""
import os
import re
import unittest

import torch

import kforge_test_util as util
from kforge_py import fx_shape, import_check, kernelbench, spec_build, spec_torch

EXAMPLES = ["90_diag_matmul_unsqueeze", "91_cumsum_exclusive_cat", "92_flatten_linear",
            "93_permute_transpose", "94_slice_index", "95_cat_stack_split", "96_constant_pad",
            "97_expand_broadcast"]
FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "shape_errors")


def build(stem):
    loaded = kernelbench.load(util.example(stem))
    spec, conv = spec_build.build(loaded, "kb_" + stem, "")
    return spec, conv, loaded


class ShapeSpecs(unittest.TestCase):
    def test_diag_matmul_is_a_view_and_a_broadcast_mul(self):
        s, _, _ = build("90_diag_matmul_unsqueeze")
        self.assertEqual(s["graph"], [
            {"op": "reshape", "inputs": ["A"], "shape": ["N", 1], "output": "unsqueeze"},
            {"op": "mul", "inputs": ["unsqueeze", "B"], "output": "mul"}])

    def test_exclusive_cumsum_is_slice_cumsum_pad(self):
        s, _, _ = build("91_cumsum_exclusive_cat")
        self.assertEqual([op["op"] for op in s["graph"]], ["slice", "cumsum", "pad"])
        self.assertEqual(s["graph"][0]["end"], -1)  # x.size(1) - 1, from the end
        self.assertEqual(s["graph"][2]["pads"], [[0, 0], [1, 0]])
        self.assertNotIn("value", s["graph"][2])

    def test_flatten_is_a_product_of_dim_names(self):
        # the flatten a Linear reads takes the weight's in-features dim (one contracted dim by
        # name); the one a sum reads stays the product
        s, _, _ = build("92_flatten_linear")
        shapes = [op["shape"] for op in s["graph"] if op["op"] == "reshape"]
        weight = s["inputs"]["fc_weight"]["shape"][1]
        self.assertEqual(shapes, [["batch_size", weight], ["batch_size", "channels*height*width"]])

    def test_a_split_that_undoes_a_merge_names_the_merged_dims(self):
        # rows flattened for a Linear, then both the Linear's output and the rows split back
        # (NetVLAD): the splits' leading axis is the batch again, a dim that re-binds, not 64
        path = util.kernelbench_file(
            "self.fc = nn.Linear(features, clusters)",
            "f = x.view(-1, x.size(2))\n"
            "a = self.fc(f).softmax(-1).view(-1, x.size(1), 8)\n"
            "return torch.matmul(a.transpose(1, 2), f.view(-1, x.size(1), x.size(2)))",
            "torch.rand(batch_size, n, features)",
            "batch_size = 64\nn = 40\nfeatures = 24\nclusters = 8")
        spec, _ = util.build_file(path, "kb_split_merge")
        shapes = [op["shape"] for op in spec["graph"] if op["op"] == "reshape"]
        self.assertIn(["batch_size", "n", "clusters"], shapes)
        self.assertIn(["batch_size", "n", "features"], shapes)

    def test_expand_keeps_axes_as_minus_one(self):
        s, _, _ = build("97_expand_broadcast")
        ex = [op["shape"] for op in s["graph"] if op["op"] == "expand"]
        self.assertEqual(ex, [[-1, "channels", "length"], ["batch_size", -1, "length"]])

    def test_split_groups_and_minus_one(self):
        self.assertEqual(fx_shape._groups((2, 12, 5), (2, 3, 4, 5)),
                         [([0], [0]), ([1], [1, 2]), ([2], [3])])
        self.assertEqual(fx_shape._groups((6, 1, 4), (24,)), [([0, 2], [0])])
        self.assertIsNone(fx_shape._groups((6, 4), (5, 5)))
        op = {"op": "reshape", "inputs": ["x"], "output": "y"}
        shapes = {"x": (2, 12), "y": (2, 3, 4)}
        names = {("x", 0): "B", ("x", 1): "C"}
        got = fx_shape.name_shape_attrs(op, shapes, lambda t, i: names.get((t, i), shapes[t][i]))
        self.assertEqual(got["shape"], ["B", 3, -1])

    def test_refused_with_the_reason(self):
        cases = [("reshape_mismatch", r"shape '\[7, 9\]' is invalid for input of size 60"),
                 ("index_out_of_range", r"index 12 is out of bounds for dimension 1 with size 10"),
                 ("narrow_out_of_range", r"start \(8\) \+ length \(5\) exceeds dimension size"),
                 ("advanced_indexing", r"indexing with Tensor \(advanced indexing\) is not "
                                       r"supported"),
                 ("reflect_pad", r"F.pad with mode 'reflect' is not supported")]
        for name, pattern in cases:
            with self.subTest(name):
                loaded = kernelbench.load(os.path.join(FIXTURES, name + ".py"))
                with self.assertRaisesRegex(spec_build.Unsupported, pattern):
                    spec_build.build(loaded, "kb_" + name, "")


class ShapeNumbers(unittest.TestCase):
    def test_every_example_matches_pytorch(self):
        for stem in EXAMPLES:
            with self.subTest(stem):
                s, _, loaded = build(stem)
                flag, line = util.validate(s, loaded, util.example(stem))
                self.assertIsNone(flag)
                self.assertIn("interpreter = PyTorch (fp64) at", line)
                worst = float(re.search(r"max \|diff\| (\S+)", line).group(1))
                self.assertLess(worst, 1e-12, line)

    def test_reduced_sizes_keep_the_structure(self):
        # the spec follows re-bound sizes: the check ran at reduced sizes, not the file's own
        for stem in ("90_diag_matmul_unsqueeze", "91_cumsum_exclusive_cat"):
            with self.subTest(stem):
                s, _, loaded = build(stem)
                _, line = util.validate(s, loaded, util.example(stem))
                self.assertIn("reduced sizes", line)

    def test_spec_torch_runs_the_shape_ops(self):
        for stem in EXAMPLES:
            with self.subTest(stem):
                s, conv, loaded = build(stem)
                feed = spec_build.feeds(loaded, conv)
                got = spec_torch.make_forward(s)(*[feed[n].double() for n in s["inputs"]])
                ref = import_check.torch_outputs(loaded, loaded.inputs)
                for g, r in zip(got, ref):
                    torch.testing.assert_close(g, r, rtol=1e-12, atol=1e-12)

    def test_a_wrong_attribute_is_caught(self):
        s, _, loaded = build("91_cumsum_exclusive_cat")
        s["graph"][2]["value"] = 1.0  # pad with 1: not what the module computes
        with self.assertRaises(import_check.ImportFailed):
            util.validate(s, loaded, util.example("91_cumsum_exclusive_cat"))
        # narrow from 1: the pad no longer restores the axis it names (out_names)
        s, _, loaded = build("91_cumsum_exclusive_cat")
        s["graph"][0]["start"] = 1
        _, line = util.validate(s, loaded, util.example("91_cumsum_exclusive_cat"))
        self.assertIn('out_names names axis 1 "length"', line)


if __name__ == "__main__":
    unittest.main()
