"""PyTorch's 1-D, 3-D, grouped / depthwise and transposed convolutions -> the spec's conv1d,
conv3d and conv_transpose1d/2d/3d ops (nn.Conv1d/3d, nn.ConvTranspose1d/2d/3d, F.conv*,
padding='same'/'valid', output_padding, groups): the attributes and weight shapes of the spec,
the fp64 interpreter equal to PyTorch (fp64) on each example file, and a wrong attribute of a
transposed convolution caught by the numeric check. The refusals are in test_import_conv.py."""
import os
import re
import unittest

import kforge_test_util as util
from kforge_py import import_kernelbench, kernelbench, spec_build

EXAMPLES = ["40_conv1d_dilated_strided", "41_conv3d_asymmetric", "42_depthwise_separable_conv",
            "43_conv_transpose1d", "44_conv_transpose2d_grouped_relu",
            "45_conv_transpose3d_bias_add", "46_conv_functional_forms"]


def build(stem):
    loaded = kernelbench.load(util.example(stem))
    spec, _ = spec_build.build(loaded, "kb_" + stem, "")
    return spec, loaded


def conv_ops(spec):
    return [op for op in spec["graph"] if op["op"].startswith("conv")]


class ConvNdSpecs(unittest.TestCase):
    def test_conv1d_and_conv3d_attributes(self):
        s, _ = build("40_conv1d_dilated_strided")
        op = conv_ops(s)[0]
        self.assertEqual(op["op"], "conv1d")
        self.assertEqual((op["stride"], op["padding"], op["dilation"], op["groups"]),
                         ([2], [4], [2], 1))
        self.assertEqual(s["inputs"]["x"]["shape"], ["batch_size", "in_channels", "length"])
        self.assertEqual(s["inputs"]["conv1d_weight"]["shape"], ["out_channels", "in_channels", 5])
        self.assertEqual(op["out_dims"], ["length_out"])
        s, _ = build("41_conv3d_asymmetric")
        op = conv_ops(s)[0]
        self.assertEqual(op["op"], "conv3d")
        self.assertEqual((op["stride"], op["padding"]), ([1, 2, 1], [1, 2, 0]))
        self.assertEqual(s["inputs"]["conv3d_weight"]["shape"],
                         ["out_channels", "in_channels", 3, 5, 3])
        # depth keeps its size (stride 1, 2 * 1 = 3 - 1); height and width are derived
        self.assertEqual(op["out_dims"], ["depth", "height_out", "width_out"])

    def test_depthwise_and_transposed_attributes(self):
        s, _ = build("42_depthwise_separable_conv")
        dw, pw = conv_ops(s)
        # a depthwise conv's groups is its channels' dim (16a2dd3: a re-binding moves them together)
        k, *rest = s["inputs"][dw["inputs"][1]]["shape"]  # [K, C/groups = 1, 3, 3]
        self.assertEqual(rest, [1, 3, 3])
        self.assertEqual(s["dims"][k], 16)
        self.assertEqual(s["dims"][dw["groups"]] if isinstance(dw["groups"], str)
                         else dw["groups"], 16)
        self.assertEqual(dw["groups"], s["inputs"][dw["inputs"][0]]["shape"][1])
        self.assertEqual(pw["groups"], 1)
        s, _ = build("43_conv_transpose1d")
        op = conv_ops(s)[0]
        self.assertEqual(op["op"], "conv_transpose1d")
        self.assertEqual((op["stride"], op["padding"], op["output_padding"], op["dilation"]),
                         ([2], [1], [1], [2]))
        # the transposed weight is [C, K/groups, *]
        self.assertEqual(s["inputs"][op["inputs"][1]]["shape"], ["in_channels", "out_channels", 3])
        s, _ = build("44_conv_transpose2d_grouped_relu")
        op = conv_ops(s)[0]
        self.assertEqual(op["op"], "conv_transpose2d")
        self.assertEqual((op["stride"], op["padding"], op["output_padding"], op["groups"]),
                         ([2, 1], [1, 2], [1, 0], 4))
        self.assertEqual(s["inputs"][op["inputs"][1]]["shape"][0], "in_channels")
        self.assertEqual([o["op"] for o in s["graph"]], ["conv_transpose2d", "scale", "relu"])
        s, _ = build("46_conv_functional_forms")
        ops = conv_ops(s)
        self.assertEqual([o["op"] for o in ops], ["conv3d", "conv_transpose1d"])
        self.assertEqual(ops[0]["padding"], [1, 2, 1])  # 'same' with dilation (1, 2, 1)
        self.assertEqual((ops[1]["stride"], ops[1]["groups"]), ([3], 2))


class ConvNdNumbers(unittest.TestCase):
    """The spec through `kforge interpret` (fp64) = PyTorch (fp64), at reduced sizes where the
    file allows."""

    def test_every_example_matches_pytorch(self):
        for stem in EXAMPLES:
            with self.subTest(stem):
                spec, loaded = build(stem)
                flag, line = util.validate(spec, loaded, util.example(stem))
                self.assertIsNone(flag)
                self.assertIn("interpreter = PyTorch (fp64) at", line)
                worst = float(re.search(r"max \|diff\| (\S+)", line).group(1))
                self.assertLess(worst, 1e-10, line)

    def test_wrong_transposed_attribute_is_caught(self):
        # y's length 2 (L - 1) - 2 p + d (k - 1) + op + 1 (stride 2, p 1, op 1, d 2, k 3): each
        # tampered attribute changes it, which the check reports
        path = util.example("43_conv_transpose1d")
        loaded = kernelbench.load(path)
        for tamper, pattern in [({"padding": [2], "dilation": [1], "output_padding": [1]},
                                 "shape"),
                                ({"output_padding": [0]}, "shape"),
                                ({"stride": [1], "output_padding": [0]}, "shape")]:
            with self.subTest(tamper):
                spec, _ = spec_build.build(loaded, "kb_t", "")
                spec["graph"][0].update(tamper)
                spec["graph"][0].pop("out_dims", None)
                with self.assertRaisesRegex(import_kernelbench.ImportFailed, pattern):
                    util.validate(spec, loaded, path)


if __name__ == "__main__":
    unittest.main()
