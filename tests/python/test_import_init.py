"""A param's draw follows its module's default init (python/kforge_py/fx_init.py): PyTorch, and
so KernelBench's Model, starts nn.Linear / nn.Conv*d / nn.ConvTranspose*d weights and biases
uniform in +-1/sqrt(fan_in), and kforge draws a param N(0, 1) unless the spec says otherwise -
through a deep network that grows the activations ~sqrt(fan_in) per layer (KernelBench L3's
GoogleNet overflowed fp32). Our own KernelBench-format conv net (fixtures/networks/
init_scale_convnet.py: a grouped conv, a transposed conv, a 1x1 conv, Linear layers, a BatchNorm
and a LayerNorm, a raw nn.Parameter) imported by `kforge import kernelbench`: each such weight
and bias "uniform_pm1" with "fan_in" equal to torch's _calculate_fan_in_and_fan_out on the
weight, written by dim names so that a smaller binding draws at its own fan-in; the norm affine
params and the raw parameter at the default draw; spec_torch's baseline inputs at that scale."""
import math
import os
import unittest

import torch
import torch.nn as nn

import kforge_test_util as util
from kforge_py import fx_init, kernelbench, spec_torch

STEM = "init_scale_convnet"
PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "networks",
                    STEM + ".py")
SCALED = (nn.Linear, nn.Conv2d, nn.ConvTranspose2d)


class InitScale(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = kernelbench.load(PATH).model
        _, cls.spec = util.import_fixture(unittest.TestCase(), STEM)

    def modules(self, kinds):
        return [(p, m) for p, m in self.model.named_modules() if isinstance(m, kinds)]

    def test_linear_and_conv_params_are_drawn_at_torchs_fan_in(self):
        inputs = self.spec["inputs"]
        seen = 0
        for path, mod in self.modules(SCALED):
            fan_in, _ = nn.init._calculate_fan_in_and_fan_out(mod.weight)
            for attr in ("weight", "bias"):
                entry = inputs[f"{path}_{attr}"]
                with self.subTest(param=f"{path}.{attr}"):
                    self.assertEqual(entry.get("distribution"), "uniform_pm1")
                    self.assertNotIn("scale", entry)
                    self.assertEqual(spec_torch.extent(self.spec, entry["fan_in"]), fan_in)
                    # by dim names where the weight's in-extent is one: it follows a re-binding
                    self.assertIsInstance(entry["fan_in"], str)
                    seen += 1
        self.assertEqual(seen, 14)
        # the layouts torch reads differently: a grouped conv's in-channels per group, a
        # transposed conv's [C_in, K / groups, kh, kw] (fan-in from K / groups, not C_in)
        self.assertEqual(inputs["grouped_weight"]["fan_in"], "D4*3*3")
        self.assertEqual(spec_torch.extent(self.spec, inputs["up_weight"]["fan_in"]), 16 * 4)
        self.assertEqual(inputs["mix_weight"]["fan_in"], "D16_1")  # a 1x1 kernel: the channels

    def test_norm_affine_and_raw_params_keep_the_default_draw(self):
        # not ones and zeros: a kernel dropping the affine must still fail the check
        for name in ("bn_weight", "bn_bias", "norm_weight", "norm_bias", "gain"):
            with self.subTest(param=name):
                entry = self.spec["inputs"][name]
                self.assertTrue(entry.get("param"))
                self.assertFalse({"distribution", "fan_in", "scale"} & set(entry), entry)
        self.assertEqual(self.spec["inputs"]["x"].get("distribution"), "uniform01")

    def test_baseline_inputs_follow_the_scale_and_the_binding(self):
        drawn = dict(zip(self.spec["inputs"], spec_torch.make_inputs(self.spec, seed=3)))
        for name, entry in self.spec["inputs"].items():
            if "fan_in" not in entry:
                continue
            bound = 1 / math.sqrt(spec_torch.extent(self.spec, entry["fan_in"]))
            with self.subTest(param=name):
                self.assertAlmostEqual(spec_torch.draw_scale(self.spec, name), bound)
                self.assertLessEqual(float(drawn[name].abs().max()), bound)
                if drawn[name].numel() >= 64:
                    self.assertGreater(float(drawn[name].abs().max()), 0.8 * bound)
                    self.assertLess(float(drawn[name].min()), 0.0)  # +-, not [0, 1)
        self.assertGreater(float(drawn["gain"].abs().max()), 1.0)  # N(0, 1)
        smaller = dict(self.spec, dims=dict(self.spec["dims"], D4=2))
        self.assertAlmostEqual(spec_torch.draw_scale(smaller, "grouped_weight"),
                               1 / math.sqrt(2 * 9))
        # the net's output stays at PyTorch's own scale; drawn N(0, 1) it is far larger
        forward = spec_torch.make_forward(self.spec)
        with torch.no_grad():
            out = forward(*drawn.values())[0]
            plain = {k: {f: v for f, v in e.items() if f not in ("distribution", "fan_in")}
                     for k, e in self.spec["inputs"].items()}
            wild = forward(*spec_torch.make_inputs(dict(self.spec, inputs=plain), seed=3))[0]
        self.assertLess(float(out.abs().max()), 10.0)
        self.assertGreater(float(wild.abs().max()), 100 * float(out.abs().max()))

    def test_rule_reads_the_module_not_the_name(self):
        # a subclass with an init of its own is not assumed to draw as torch's
        class Zeroed(nn.Linear):
            def reset_parameters(self):
                nn.init.zeros_(self.weight)
        root = nn.Module()
        root.a, root.b, root.lstm = nn.Linear(6, 3), Zeroed(6, 3), nn.LSTM(5, 7)
        root.attn = nn.MultiheadAttention(8, 2)
        self.assertEqual(fx_init.rule(root, "a.weight"), ("a.weight", 6, 1.0))
        self.assertEqual(fx_init.rule(root, "a.bias"), ("a.weight", 6, 1.0))
        self.assertIsNone(fx_init.rule(root, "b.weight"))
        self.assertEqual(fx_init.rule(root, "lstm.bias_ih_l0"), ("lstm.weight_hh_l0", 7, 1.0))
        path, fan_in, scale = fx_init.rule(root, "attn.in_proj_weight")  # xavier: [3E, E]
        self.assertAlmostEqual(scale / math.sqrt(fan_in), math.sqrt(6 / (8 + 24)))
        self.assertIsNone(fx_init.rule(root, "attn.in_proj_bias"))  # zeros in torch
        self.assertEqual(fx_init.rule(root, "attn.out_proj.weight"), ("attn.out_proj.weight",
                                                                      8, 1.0))
        self.assertIsNone(fx_init.rule(root, "missing.weight"))


if __name__ == "__main__":
    unittest.main()
