"""nn.LSTM / nn.GRU -> the spec's lstm / gru ops (python/kforge_py/fx_rnn.py): the examples
(a two-layer LSTM returning its output and h_n, a bidirectional batch-first GRU whose h_n feeds
a Linear) import with PyTorch's parameter names, agree with PyTorch in fp64 through the
interpreter and through spec_torch (what `kforge baseline` times), plan and pass a simulated
search round; no initial state is PyTorch's zeros; what the op cannot say is refused by name (a
wrong h0 shape, proj_size, nn.RNN)."""
import os
import shutil
import tempfile
import unittest

import kforge_test_util as util


def copied(stem):
    """A copy of example `stem` (the helpers delete the file they are given)."""
    fd, path = tempfile.mkstemp(suffix=".py")
    os.close(fd)
    shutil.copy(util.example(stem), path)
    return path


LSTM = "84_lstm_two_layer"
GRU = "85_gru_bidirectional_batch_first"


def rnn_file(init, forward, inputs):
    """A KernelBench-format module file whose forward(x, h0=None, c0=None) returns `forward`."""
    src = f"""import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        {init}

    def forward(self, x, h0=None, c0=None):
        {forward}


batch = 3
steps = 5
features = 8
hidden = 6
layers = 2


def get_inputs():
    return [{inputs}]


def get_init_inputs():
    return []
"""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(src)
    return f.name


class RnnSpecs(unittest.TestCase):
    def test_lstm_example_is_two_ops_with_pytorch_names(self):
        s, _ = util.build_file(copied(LSTM), "kb_lstm")
        self.assertEqual([(op["op"], op.get("result", "output")) for op in s["graph"]],
                         [("lstm", "output"), ("lstm", "h_n")])
        op = s["graph"][0]
        self.assertEqual(op["num_layers"], 2)
        self.assertTrue(op["batch_first"])
        self.assertEqual(op["inputs"][:3], ["x", "h0", "c0"])
        self.assertEqual(op["inputs"][3:7], ["rnn_weight_ih_l0", "rnn_weight_hh_l0",
                                             "rnn_bias_ih_l0", "rnn_bias_hh_l0"])
        self.assertEqual(s["inputs"]["rnn_weight_ih_l1"]["shape"][1],
                         s["inputs"]["h0"]["shape"][2])  # layer 1 reads H features
        # the gate rows follow the hidden size's dim (a product: re-binding H resizes them)
        self.assertEqual(s["inputs"]["rnn_weight_hh_l0"]["shape"], ["4*hidden", "hidden"])

    def test_gru_example_is_gru_then_linear(self):
        s, _ = util.build_file(copied(GRU), "kb_gru")
        self.assertEqual([op["op"] for op in s["graph"]], ["gru", "linear"])
        op = s["graph"][0]
        self.assertEqual((op["result"], op["bidirectional"], op["batch_first"]),
                         ("h_n", True, True))
        self.assertIn("encoder_weight_hh_l1_reverse", op["inputs"])
        self.assertEqual(s["inputs"]["encoder_weight_ih_l1"]["shape"], ["3*hidden", "2*hidden"])

    def test_examples_match_pytorch_in_fp64(self):
        for stem in (LSTM, GRU):
            with self.subTest(stem):
                util.assert_matches_pytorch(self, copied(stem), "kb_rnn", 1e-12)
                util.assert_spec_torch_matches(self, copied(stem), "kb_rnn")

    def test_c_n_and_no_bias(self):
        path = rnn_file("self.rnn = nn.LSTM(features, hidden, layers, bias=False, "
                        "bidirectional=True)",
                        "return self.rnn(x, (h0, c0))[1][1]",
                        "torch.randn(steps, batch, features), torch.randn(2 * layers, batch, "
                        "hidden), torch.randn(2 * layers, batch, hidden)")
        spec, _ = util.assert_matches_pytorch(self, path, "kb_cn", 1e-12)
        op = spec["graph"][0]
        self.assertEqual((op["result"], op["bias"]), ("c_n", False))


class RnnRefusals(unittest.TestCase):
    def test_wrong_h0_shape_is_a_clear_error(self):
        path = rnn_file("self.rnn = nn.GRU(features, hidden, layers)",
                        "return self.rnn(x, h0)[0]",
                        "torch.randn(steps, batch, features), torch.randn(layers + 1, batch, "
                        "hidden)")
        util.assert_build_refused(self, path, "kb_bad_h0",
                                  r"the model fails in PyTorch on its own inputs: Expected "
                                  r"hidden size \(2, 3, 6\), got \[3, 3, 6\]")

    def test_missing_state_is_the_zero_state(self):
        # self.rnn(x): PyTorch starts from zeros; the trace passes them as constants forward()
        # made, the lstm op's h0 and c0 (one [layers, batch, hidden] each)
        from kforge_py import kernelbench, spec_build
        path = rnn_file("self.rnn = nn.LSTM(features, hidden, layers)",
                        "return self.rnn(x)[0]", "torch.randn(steps, batch, features)")
        try:
            loaded = kernelbench.load(path)
            spec, conv = spec_build.build(loaded, "kb_no_state", "")
            feeds = spec_build.feeds(loaded, conv)
        finally:
            os.unlink(path)
        op = spec["graph"][0]
        self.assertEqual(op["op"], "lstm")
        for state in op["inputs"][1:3]:
            self.assertTrue(spec["inputs"][state].get("param"))
            self.assertEqual(list(feeds[state].shape), [2, 3, 6])
            self.assertEqual(feeds[state].abs().max().item(), 0.0)

    def test_proj_size_is_refused_by_name(self):
        path = rnn_file("self.rnn = nn.LSTM(features, hidden, layers, proj_size=3)",
                        "return self.rnn(x, (h0, c0))[0]",
                        "torch.randn(steps, batch, features), torch.randn(layers, batch, 3), "
                        "torch.randn(layers, batch, hidden)")
        util.assert_build_refused(self, path, "kb_proj", "nn.LSTM with proj_size")


class RnnEndToEnd(unittest.TestCase):
    def test_two_layer_lstm_plans_and_passes_a_simulated_round(self):
        with tempfile.TemporaryDirectory() as d:
            spec, out = util.import_example_and_optimize(self, LSTM, d)
            self.assertIn("max |diff|", out)

    def test_bidirectional_gru_plans_and_passes_a_simulated_round(self):
        with tempfile.TemporaryDirectory() as d:
            util.import_example_and_optimize(self, GRU, d)


class DrawnState(unittest.TestCase):
    def test_a_state_drawn_when_not_given_is_an_input(self):
        # fixtures/networks/gru_drawn_state.py: forward(x, h0=None) draws h0 with torch.randn
        # when it is None (KernelBench 35_LSTM's h0/c0): h0 becomes the spec's second input,
        # and the check feeds the same tensor to PyTorch and the interpreter. Was refused:
        # "torch.randn in forward: ... not reproducible"
        out, spec = util.import_fixture(self, "gru_drawn_state")
        self.assertIn("interpreter = PyTorch (fp64) at", out)
        drawn = {n: t["shape"] for n, t in spec["inputs"].items() if not t.get("param")}
        self.assertEqual(drawn, {"x": ["batch_size", "seq_len", "input_size"],
                                 "h0": ["num_layers", "batch_size", "hidden_size"]})

    def test_a_state_copied_into_a_tensor_attribute_is_read_from_the_input(self):
        # fixtures/networks/state_copy_cell.py: self.state.copy_(h), then self.state read (as
        # KernelBench 33_VanillaRNN's self.hidden.copy_(initial_hidden)): the spec reads h. It
        # read the attribute's own values (a wrong spec, caught by the check at reduced sizes)
        out, spec = util.import_fixture(self, "state_copy_cell")
        self.assertIn("interpreter = PyTorch (fp64) at", out)
        self.assertNotIn("state", spec["inputs"])
        cat = next(op for op in spec["graph"] if op["op"] == "cat")
        self.assertEqual(cat["inputs"], ["x", "h"])

    def test_a_draw_that_no_argument_takes_is_still_refused(self):
        path = rnn_file("self.rnn = nn.GRU(features, hidden, layers)",
                        "return self.rnn(x, h0)[0] + torch.randn(1)",
                        "torch.randn(steps, batch, features), torch.randn(layers, batch, hidden)")
        util.assert_build_refused(self, path, "kb_noise", "torch.randn in forward")


if __name__ == "__main__":
    unittest.main()
