"""PyTorch pooling -> the spec's max_pool, avg_pool, adaptive_avg_pool and adaptive_max_pool ops:
nn.MaxPool1d/2d/3d, nn.AvgPool1d/2d/3d, nn.Adaptive{Avg,Max}Pool1d/2d/3d and the functional
forms with kernel_size, stride (default kernel_size), padding, dilation, ceil_mode,
count_include_pad and divisor_override; the output dims; what the spec cannot say refused by
name (return_indices, unbatched input, LPPool); the fp64 interpreter agrees with PyTorch on each
form (and a wrong attribute is caught)."""
import unittest

import kforge_test_util as util

SIZES = "batch_size = 2\nchannels = 3\ndepth = 6\nheight = 10\nwidth = 12\nlength = 17"
INPUTS = {1: "torch.randn(batch_size, channels, length)",
          2: "torch.randn(batch_size, channels, height, width)",
          3: "torch.randn(batch_size, channels, depth, height, width)"}


def pool_file(init, forward, rank=2, inputs=None):
    """A KernelBench-format module: `init` in __init__ (after super), forward(x) returns
    `forward`."""
    return util.kernelbench_file(init, "return " + forward, inputs or INPUTS[rank], SIZES)


def build(path, keep=False):
    return util.build_file(path, "kb_pool", keep)


def pool_ops(spec):
    return [op for op in spec["graph"] if "pool" in op["op"]]


class PoolSpecs(unittest.TestCase):
    """The spec each spelling gives (no CLI: the importer's side alone)."""

    def test_examples(self):
        s, _ = build(util.example("71_max_pool_2d"), keep=True)
        self.assertEqual(s["graph"], [{
            "op": "max_pool", "inputs": ["x"], "kernel_size": 3, "stride": 2, "padding": 1,
            "output": "pool", "out_dims": ["height_out", "width_out"]}])
        s, _ = build(util.example("75_conv2d_max_pool_relu"), keep=True)
        self.assertEqual([op["op"] for op in s["graph"]], ["conv2d", "max_pool", "relu"])
        self.assertEqual(s["graph"][1]["inputs"], [s["graph"][0]["output"]])
        s, _ = build(util.example("76_global_avg_pool_mean"), keep=True)
        self.assertEqual([op["op"] for op in s["graph"]],
                         ["sigmoid", "mean", "mean", "adaptive_avg_pool"])

    def test_functional_and_module_spellings(self):
        cases = [
            # (init, forward, rank, the pool op without inputs/output/out_dims)
            ("self.p = nn.MaxPool1d(4, stride=3, padding=2, dilation=2, ceil_mode=True)",
             "self.p(x)", 1, {"op": "max_pool", "kernel_size": 4, "stride": 3, "padding": 2,
                              "dilation": 2, "ceil_mode": True}),
            ("", "F.max_pool2d(x, (3, 2), padding=(1, 0))", 2,
             {"op": "max_pool", "kernel_size": [3, 2], "padding": [1, 0]}),
            ("", "torch.max_pool3d(x, 2, 1)", 3,
             {"op": "max_pool", "kernel_size": 2, "stride": 1}),
            ("self.p = nn.AvgPool1d(3, 1, 1, count_include_pad=False)", "self.p(x)", 1,
             {"op": "avg_pool", "kernel_size": 3, "stride": 1, "padding": 1,
              "count_include_pad": False}),
            ("", "F.avg_pool2d(x, 3, 2, 1, True, True, 4)", 2,
             {"op": "avg_pool", "kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
              "divisor_override": 4}),
            ("self.p = nn.AvgPool3d((2, 3, 3), stride=(1, 2, 2))", "self.p(x)", 3,
             {"op": "avg_pool", "kernel_size": [2, 3, 3], "stride": [1, 2, 2]}),
            ("self.p = nn.AdaptiveAvgPool3d((2, None, 1))", "self.p(x)", 3,
             {"op": "adaptive_avg_pool", "output_size": [2, 10, 1]}),
            ("", "F.adaptive_max_pool1d(x, 5)", 1,
             {"op": "adaptive_max_pool", "output_size": 5}),
            ("self.p = nn.AdaptiveMaxPool2d(1)", "self.p(x)", 2,
             {"op": "adaptive_max_pool", "output_size": 1}),
        ]
        for init, forward, rank, want in cases:
            with self.subTest(forward=forward, init=init):
                s, _ = build(pool_file(init, forward, rank))
                (op,) = pool_ops(s)
                got = {k: v for k, v in op.items() if k not in ("inputs", "output", "out_dims")}
                self.assertEqual(got, want)

    def test_output_dims(self):
        # stride 1 and 2 * padding = kernel - 1: y keeps x's dims, no out_dims
        s, _ = build(pool_file("", "F.avg_pool2d(x, 3, 1, 1)"))
        self.assertNotIn("out_dims", pool_ops(s)[0])
        # only the height changes
        s, _ = build(pool_file("", "F.max_pool2d(x, (2, 3), (2, 1), (0, 1))"))
        self.assertEqual(pool_ops(s)[0]["out_dims"], ["height_out", "width"])
        # two pools of x: distinct derived names
        s, _ = build(pool_file("", "F.max_pool2d(x, 2) , F.avg_pool2d(x, 3)"))
        self.assertEqual([op["out_dims"] for op in pool_ops(s)],
                         [["height_out", "width_out"], ["height_out1", "width_out1"]])

    def test_refused_by_name(self):
        cases = [
            ("self.p = nn.MaxPool2d(2, return_indices=True)", "self.p(x)[0]", None,
             r"nn\.MaxPool2d \(module p\) with return_indices=True is not supported"),
            ("", "F.max_pool1d(x, 2, return_indices=True)[0]", INPUTS[1],
             r"max_pool1d with return_indices=True is not supported"),
            ("", "F.adaptive_max_pool2d(x, 2, True)[0]", None, r"return_indices=True"),
            ("self.p = nn.MaxPool2d(2)", "self.p(x)", "torch.randn(channels, height, width)",
             r"unbatched \[C, \*\] input is not supported"),
            ("self.p = nn.LPPool2d(2, 2)", "self.p(x)", None, r"nn\.LPPool2d .*not supported"),
            ("", "F.lp_pool1d(x, 2, 3)", INPUTS[1], r"lp_pool1d .*not supported"),
        ]
        for init, forward, inputs, pattern in cases:
            with self.subTest(pattern):
                util.assert_build_refused(self, pool_file(init, forward, inputs=inputs),
                                          "kb_pool", pattern)

    def test_spec_torch_runs_the_imported_spec(self):
        """The spec as PyTorch (what `kforge baseline` times) computes the module, fp64."""
        forward = ("F.avg_pool2d(torch.relu(F.max_pool2d(x, 3, 2, 1, ceil_mode=True)), 2, "
                   "count_include_pad=False, padding=1), F.adaptive_avg_pool2d(x, (3, 4))")
        util.assert_spec_torch_matches(self, pool_file("", forward), "kb_pool")


class PoolNumbers(unittest.TestCase):
    """The spec through `kforge interpret` (fp64) = PyTorch (fp64); a wrong attribute is
    caught."""

    def assert_matches(self, init, forward, rank):
        util.assert_matches_pytorch(self, pool_file(init, forward, rank), "kb_pool", 1e-12)

    def test_each_form_matches_pytorch(self):
        cases = [
            ("F.max_pool1d(x, 4, 3, 2, 2, ceil_mode=True), F.avg_pool1d(x, 3, 2, 1, True, "
             "False), F.adaptive_avg_pool1d(x, 5), F.adaptive_max_pool1d(x, 7)", 1),
            ("F.max_pool2d(x, (3, 2), (2, 1), (1, 1), (1, 2), True), F.avg_pool2d(x, 3, 2, 1, "
             "True, True), F.avg_pool2d(x, 2, divisor_override=3), F.adaptive_max_pool2d(x, "
             "(4, 5)), F.adaptive_avg_pool2d(x, 1)", 2),
            ("F.max_pool3d(x, 3, 2, 1, ceil_mode=True), F.avg_pool3d(x, (2, 3, 3), 2, (1, 1, 0), "
             "count_include_pad=False), F.adaptive_avg_pool3d(x, (4, 3, 5))", 3),
        ]
        for forward, rank in cases:
            with self.subTest(rank=rank):
                self.assert_matches("", forward, rank)

    def test_wrong_attribute_is_caught(self):
        util.assert_attributes_caught(
            self, pool_file("", "F.avg_pool2d(x, 3, 2, 1, ceil_mode=True)"), "kb_pool",
            [({"count_include_pad": False}, "differ"), ({"ceil_mode": False}, "shape"),
             ({"divisor_override": 8}, "differ")])


if __name__ == "__main__":
    unittest.main()
