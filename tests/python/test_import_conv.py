"""PyTorch convolutions -> the spec's conv2d op: nn.Conv2d, F.conv2d and torch.conv2d with their
stride, padding ('valid', symmetric 'same'), dilation, groups and bias; the weights as params
with [K, C/groups, R, S] named dims; the output dims; what the spec cannot say refused by name
(the 1-D, 3-D and transposed forms: test_import_conv_nd.py);
the fp64 interpreter agrees with PyTorch (and a wrong attribute is caught); a transposed conv
whose output a cat joins to the input's height (a UNet level) names that dim."""
import unittest

import kforge_test_util as util
from kforge_py import kernelbench


def conv_file(init, forward, inputs="torch.randn(batch_size, in_channels, height, width)",
              sizes="batch_size = 2\nin_channels = 4\nout_channels = 6\nheight = 10\nwidth = 12"):
    """A KernelBench-format module: `init` in __init__ (after super), forward(x) is `forward`."""
    return util.kernelbench_file(init, forward, inputs, sizes)


def build(path, keep=False):
    """(spec, loaded) of the module at `path`; the file is deleted unless `keep`."""
    return util.build_file(path, "kb_conv", keep)


def conv_op(spec):
    return next(op for op in spec["graph"] if op["op"] == "conv2d")


class ConvSpecs(unittest.TestCase):
    """The spec each spelling gives (no CLI: the importer's side alone)."""

    def test_examples(self):
        s, _ = build(util.example("09_conv2d_relu"), keep=True)
        self.assertEqual([op["op"] for op in s["graph"]], ["conv2d", "relu"])
        self.assertEqual(s["graph"][0], {
            "op": "conv2d", "inputs": ["x", "conv_weight", "conv_bias"], "stride": [1, 1],
            "padding": [0, 0], "dilation": [1, 1], "groups": 1, "output": "conv",
            "out_dims": ["height_out", "width_out"]})
        self.assertEqual(s["inputs"]["x"]["shape"],
                         ["batch_size", "in_channels", "height", "width"])
        # drawn at nn.Conv2d's default init, U(+-1/sqrt(in_channels * 3 * 3)) (fx_init)
        self.assertEqual(s["inputs"]["conv_weight"],
                         {"shape": ["out_channels", "in_channels", 3, 3],
                          "dtype": "f32", "param": True, "distribution": "uniform_pm1",
                          "fan_in": "in_channels*3*3"})
        self.assertEqual(s["inputs"]["conv_bias"],
                         {"shape": ["out_channels"], "dtype": "f32", "param": True,
                          "distribution": "uniform_pm1", "fan_in": "in_channels*3*3"})
        self.assertNotIn("height_out", s["dims"])  # derived by the spec, not declared

        s, _ = build(util.example("36_conv2d_bias_relu"), keep=True)
        self.assertEqual([op["op"] for op in s["graph"]], ["conv2d", "relu", "add"])
        self.assertEqual(s["inputs"]["bias"]["shape"], ["out_channels", 1, 1])

        # 64 output channels of a 64 x 64 image: each dim named after the integer of its role
        s, _ = build(util.example("37_conv2d_strided"), keep=True)
        op = conv_op(s)
        self.assertEqual((op["inputs"], op["stride"], op["padding"], op["dilation"]),
                         (["x", "conv2d_weight"], [2, 2], [1, 1], [1, 1]))
        self.assertEqual(s["inputs"]["x"]["shape"],
                         ["batch_size", "in_channels", "height", "width"])
        self.assertEqual(s["inputs"]["conv2d_weight"]["shape"],
                         ["out_channels", "in_channels", 3, 3])

    def test_functional_spellings_and_attributes(self):
        init = ("self.w = nn.Parameter(torch.randn(6, 2, 3, 5))\n"
                "self.b = nn.Parameter(torch.randn(6))")
        cases = [
            # (forward, stride, padding, dilation, groups, has bias, out_dims)
            ("return F.conv2d(x, self.w, self.b, stride=(2, 1), padding=(1, 2), groups=2)",
             [2, 1], [1, 2], [1, 1], 2, True, ["height_out", "width"]),
            ("return torch.conv2d(x, self.w, None, 1, 'valid', 1, 2)",
             [1, 1], [0, 0], [1, 1], 2, False, ["height_out", "width_out"]),
            ("return F.conv2d(x, self.w, padding='same', dilation=(2, 1), groups=2)",
             [1, 1], [2, 2], [2, 1], 2, False, None),
        ]
        for forward, stride, padding, dilation, groups, bias, out_dims in cases:
            with self.subTest(forward):
                s, _ = build(conv_file(init, forward))
                op = conv_op(s)
                self.assertEqual((op["stride"], op["padding"], op["dilation"], op["groups"]),
                                 (stride, padding, dilation, groups))
                self.assertEqual(len(op["inputs"]), 3 if bias else 2)
                self.assertEqual(op.get("out_dims"), out_dims)
                # the weight's second dim is C / groups = 2, its own dim (batch_size is 2 too:
                # not named after it); the kernel extents are numbers
                self.assertEqual(s["inputs"]["w"], {"shape": ["out_channels", "D2", 3, 5],
                                                    "dtype": "f32", "param": True})

    def test_same_padding_keeps_the_input_dims(self):
        s, _ = build(conv_file(
            "self.conv = nn.Conv2d(in_channels, out_channels, 3, padding='same')",
            "return self.conv(x) + x.sum(1, keepdim=True)"))
        self.assertNotIn("out_dims", conv_op(s))  # y [N, K, H, W]: the spec's default
        self.assertEqual(conv_op(s)["padding"], [1, 1])

    def test_pointwise_conv_and_output_name_clash(self):
        # a 1x1 kernel: literal 1s in the weight; a dim already named `height_out`: suffixed
        s, _ = build(conv_file("self.conv = nn.Conv2d(in_channels, out_channels, 1, stride=2)\n"
                               "self.s = nn.Parameter(torch.randn(height_out))",
                               "return self.conv(x), self.s * 2",
                               sizes="batch_size = 2\nin_channels = 4\nout_channels = 6\n"
                                     "height = 10\nwidth = 12\nheight_out = 7"))
        self.assertEqual(s["inputs"]["conv_weight"]["shape"], ["out_channels", "in_channels", 1, 1])
        self.assertEqual(s["inputs"]["s"]["shape"], ["height_out"])
        self.assertEqual(conv_op(s)["out_dims"], ["height_out1", "width_out"])

    def test_refused_by_name(self):
        cases = [
            ("self.conv = nn.Conv2d(4, 6, 3, padding=1, padding_mode='reflect')", "self.conv(x)",
             None, r"nn\.Conv2d with padding_mode='reflect' .*not supported"),
            ("self.conv = nn.Conv2d(4, 6, 4, padding='same')", "self.conv(x)", None,
             r"padding='same' is asymmetric along the height .* pads 1 before and 2 after"),
            ("self.w = nn.Parameter(torch.randn(6, 4, 3, 2))",
             "F.conv2d(x, self.w, padding='same')", None, r"asymmetric along the width"),
            ("self.conv = nn.Conv1d(4, 6, 3, padding=1, padding_mode='circular')", "self.conv(x)",
             "torch.randn(batch_size, in_channels, width)",
             r"nn\.Conv1d with padding_mode='circular' .*the spec's conv1d pads with zeros"),
            ("self.conv = nn.Conv3d(4, 6, (3, 2, 3), padding='same')", "self.conv(x)",
             "torch.randn(batch_size, in_channels, 5, height, width)",
             r"conv3d padding='same' is asymmetric along the height"),
            ("self.conv = nn.ConvTranspose2d(4, 6, 3, stride=2)",
             "self.conv(x, output_size=[21, 25])", None,
             r"nn\.ConvTranspose2d \(module conv\) called with more than its input"),
            ("self.w = nn.Parameter(torch.randn(6, 4, 3))", "F.conv1d(x, self.w)",
             "torch.randn(in_channels, width)",
             r"^conv1d of an unbatched \[C, L\] input is not supported"),
            ("self.w = nn.Parameter(torch.randn(6, 4, 3, 3))",
             "torch.convolution(x, self.w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)",
             None, r"^torch\.convolution is not supported"),
            ("self.conv = nn.Conv2d(4, 6, 3)", "self.conv(x)",
             "torch.randn(in_channels, height, width)",
             r"^conv2d of an unbatched \[C, H, W\] input is not supported"),
        ]
        for init, expr, inputs, pattern in cases:
            with self.subTest(pattern):
                kw = {"inputs": inputs} if inputs else {}
                util.assert_build_refused(self, conv_file(init, "return " + expr, **kw),
                                          "kb_conv", pattern)

    def test_size_globals_of_kernelbench_conv_files(self):
        """KernelBench's conv files write `height = width = 64` and `height, width = 32, 32`:
        each name is a size the numeric check can shrink."""
        import ast
        src = "a = b = 64\nheight, width = 32, 48\nc, d = 1, x\ne = (2, 3)\n"
        self.assertEqual(kernelbench.literal_int_globals(ast.parse(src)),
                         {"a": 64, "b": 64, "height": 32, "width": 48, "e_0": 2, "e_1": 3})
        tree = kernelbench._override(ast.parse(src), {"a": 16, "b": 16, "width": 8, "e_1": 5})
        self.assertEqual(kernelbench.literal_int_globals(tree),
                         {"a": 16, "b": 16, "height": 32, "width": 8, "e_0": 2, "e_1": 5})

    def test_spec_torch_runs_the_imported_spec(self):
        """The spec as PyTorch (what `kforge baseline` times) computes the module, fp64."""
        init = ("self.conv = nn.Conv2d(in_channels, out_channels, (3, 2), stride=(2, 1), "
                "padding=(1, 2), dilation=(1, 2), groups=2)")
        util.assert_spec_torch_matches(
            self, conv_file(init, "return torch.relu(self.conv(x))"), "kb_conv")


class ConvNumbers(unittest.TestCase):
    """The spec through `kforge interpret` (fp64) = PyTorch (fp64), at shrunk sizes where the
    file allows; a wrong attribute is caught."""

    # y [N, K, height_out, width]: the width keeps its size (stride 1, 2 * 1 = 2 * (2 - 1))
    ATTRS = ("self.conv = nn.Conv2d(in_channels, out_channels, (3, 2), stride=(2, 1), "
             "padding=(1, 1), dilation=(1, 2), groups=2)")

    def assert_matches(self, init, forward, **kw):
        return util.assert_matches_pytorch(self, conv_file(init, forward, **kw), "kb_conv", 1e-10)

    def test_attributes_bias_and_chain_match_pytorch(self):
        for init, forward, out_dims in [
                (self.ATTRS, "return torch.relu(self.conv(x))", ["height_out", "width"]),
                ("self.w = nn.Parameter(torch.randn(6, 4, 3, 3))",
                 "return F.conv2d(x, self.w, padding='same', dilation=2) * 0.5 + x.mean(1, True)",
                 None)]:
            with self.subTest(forward):
                spec, _ = self.assert_matches(init, forward)
                self.assertEqual(conv_op(spec).get("out_dims"), out_dims)

    def test_wrong_attribute_is_caught(self):
        util.assert_attributes_caught(
            self, conv_file(self.ATTRS, "return self.conv(x)"), "kb_conv",
            [({"padding": [2, 1], "dilation": [2, 2]}, "differ"),  # the same shape
             ({"stride": [1, 2]}, "PyTorch gives shape"), ({"dilation": [2, 1]}, "shape"),
             ({"padding": [1, 0]}, "shape")])


class UpsampleJoinedByCat(unittest.TestCase):
    def test_a_transposed_conv_back_to_the_input_height_imports_checked(self):
        # fixtures/networks/unet_cat_upsample.py: the transposed conv's output is one axis with
        # the input's height and width (a cat joins it to the encoder's map): out_dims names
        # them (was refused: "cannot equate it with a declared dim"); the channel dims named by
        # value (D96 = 2 * features) re-bind under the written names at reduced sizes
        out, spec = util.import_fixture(self, "unet_cat_upsample")
        self.assertIn("reduced sizes", out)
        up = next(op for op in spec["graph"] if op["op"] == "conv_transpose2d")
        self.assertEqual(up["out_dims"], ["height", "width"])


if __name__ == "__main__":
    unittest.main()
