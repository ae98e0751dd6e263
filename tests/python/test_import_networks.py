"""Whole-network import (issue 26): tracing at the file's concrete shapes (control flow and slices
on sizes, ModuleList loops, residual adds of two derived sizes, channel shuffles, dense
concatenations, shared weights, nn.MultiheadAttention and TransformerEncoderLayer decomposed,
a causal-mask buffer folded to a param), each example checked against PyTorch in fp64 at
reduced sizes, one built end to end on the simulated device; recurrent layers and control flow
on a tensor's values refused by name."""
import os
import tempfile
import textwrap
import unittest

import kforge_test_util as util
from kforge_py import spec_build

NETWORKS = ["80_resnet_basic_blocks", "81_causal_attention", "82_shape_branch_shuffle",
            "83_multihead_attention_encoder"]


_ops = util.ops_of


class Networks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.r = util.kforge("import", "kernelbench", *[util.example(s) for s in NETWORKS],
                            "-o", cls.tmp.name)
        cls.lines = util.import_lines(cls.r.stdout)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def spec(self, stem):
        return util.load_json(os.path.join(self.tmp.name,
                                           spec_build.problem_name(stem) + ".json"))

    def test_each_network_imports_and_matches_pytorch_at_reduced_sizes(self):
        self.assertEqual(self.r.returncode, 0, self.r.stdout + self.r.stderr)
        for stem in NETWORKS:
            with self.subTest(stem):
                status, msg = self.lines[stem]
                self.assertEqual(status, "ok", msg)
                self.assertIn("interpreter = PyTorch (fp64) at", msg)
                self.assertIn("reduced", msg)

    def test_resnet_blocks_share_the_derived_dim_of_the_shortcut(self):
        spec = self.spec("80_resnet_basic_blocks")
        convs = _ops(spec, "conv2d")
        self.assertEqual(len(convs), 5)  # 2 blocks x 2 convs + the 1x1 downsample
        strided = [c for c in convs if c["stride"] == [2, 2]]
        self.assertEqual(len(strided), 2)
        # the strided 3x3 conv and the strided 1x1 shortcut derive one dim (added)
        self.assertEqual(strided[0]["out_dims"], strided[1]["out_dims"])

    def test_causal_mask_is_the_structured_triangle(self):
        # the tril buffer compared with 0, folded and recognised (fx_mask): masked_fill's
        # structured causal mask, no bool input (a drawn one would be random)
        spec = self.spec("81_causal_attention")
        fill = _ops(spec, "masked_fill")
        self.assertEqual(len(fill), 1)
        self.assertEqual((fill[0]["inputs"][1:], fill[0].get("mask"), fill[0].get("diagonal")),
                         ([], "triu", 1))
        self.assertFalse([n for n, t in spec["inputs"].items() if t["dtype"] == "bool"])

    def test_shape_branch_shuffle_and_shared_weight(self):
        spec = self.spec("82_shape_branch_shuffle")
        self.assertEqual(len(_ops(spec, "avg_pool")), 1)  # the branch taken at width 16
        self.assertEqual(len(_ops(spec, "cat")), 1)
        linears = _ops(spec, "linear")
        self.assertEqual(len(linears), 2)
        self.assertEqual(linears[0]["inputs"][1], linears[1]["inputs"][1])  # one weight
        self.assertTrue(any(op["op"] == "permute" for op in spec["graph"]))  # the shuffle

    def test_attention_modules_become_matmuls_and_softmax(self):
        spec = self.spec("83_multihead_attention_encoder")
        self.assertEqual(len(_ops(spec, "softmax")), 2)
        self.assertEqual(len(_ops(spec, "matmul")), 4)
        self.assertEqual(len(_ops(spec, "layer_norm")), 3)

    def test_resnet_blocks_build_end_to_end_on_the_simulated_device(self):
        path = os.path.join(self.tmp.name, spec_build.problem_name(NETWORKS[0]) + ".json")
        r = util.kforge("optimize", path, "--device", "sim", "--rounds", "1",
                        "--db", os.path.join(self.tmp.name, "k.db"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("synthesized one from the problem", r.stdout + r.stderr)


class Functional(unittest.TestCase):
    def test_scaled_dot_product_attention_is_checked_with_its_scale_dim_kept(self):
        body = """
            import torch
            import torch.nn.functional as F
            class Model(torch.nn.Module):
                def forward(self, q, k, v):
                    return F.scaled_dot_product_attention(q, k, v)
            def get_inputs():
                return [torch.rand(4, 2, 256, 64), torch.rand(4, 2, 256, 64),
                        torch.rand(4, 2, 256, 48)]
            def get_init_inputs():
                return []
            """
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "sdpa.py")
            with open(path, "w") as f:
                f.write(textwrap.dedent(body))
            r = util.kforge("import", "kernelbench", path, "-o", d)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            spec = util.load_json(os.path.join(d, "sdpa.json"))
        self.assertEqual([op["op"] for op in spec["graph"]],
                         ["matmul", "scale", "softmax", "matmul"])
        self.assertAlmostEqual(spec["graph"][1]["value"], 0.125)
        # 1/sqrt(64) follows q's last dim: the check reduces the others and keeps that one
        self.assertIn("interpreter = PyTorch (fp64) at", r.stdout)


class Refusals(unittest.TestCase):
    def run_body(self, body, name):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, name + ".py")
            with open(path, "w") as f:
                f.write(textwrap.dedent(body))
            r = util.kforge("import", "kernelbench", path, "-o", d)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        return r.stdout

    def test_plain_rnn_layers_are_refused_by_name(self):
        out = self.run_body("""
            import torch
            import torch.nn as nn
            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.rnn = nn.RNN(16, 32, num_layers=2, batch_first=True)
                def forward(self, x):
                    return self.rnn(x)[0]
            def get_inputs():
                return [torch.randn(4, 10, 16)]
            def get_init_inputs():
                return []
            """, "rnn")
        self.assertIn("nn.RNN (module rnn: 2 layer(s) over 10 time steps) is not supported: "
                      "kforge has no plain-RNN cell op (only lstm and gru)", out)

    def test_control_flow_on_values_is_refused_by_name(self):
        out = self.run_body("""
            import torch
            import torch.nn as nn
            class Model(nn.Module):
                def forward(self, x):
                    if x.sum() > 0:
                        return x * 2
                    return x
            def get_inputs():
                return [torch.randn(4, 8)]
            def get_init_inputs():
                return []
            """, "value_branch")
        self.assertIn("control flow on a tensor's values", out)


if __name__ == "__main__":
    unittest.main()
