"""Derived extents written as the dims they come from (python/kforge_py/spec_derive.py): an axis
the importer names by its value (D3072) that a split, a cat or a flatten makes from other dims.
As a number it tied those dims to the file's size: the correctness gates shrink the dims to a
small shape and the literal stayed, so the dims it comes from stayed at full size and the fp64
reference went over the CPU budget ('no small shape fits', KernelBench L3 44, 15, 11). Our own
KernelBench-format files in fixtures/sweep - a qkv projection split by slices, a DenseNet block's
cats, a conv / depthwise conv / pool / flatten / Linear, a ShuffleNet unit's grouped convs and
channel shuffle (L3 26), a qkv bias cat(q_bias, zeros_like(v_bias), v_bias) (L3 30) - each:
imports and matches PyTorch in fp64 at reduced sizes, writes the derived dims as expressions
("2*n_embd+n_embd_2", "num_features+growth_rate", "D256_1*height_out*width_out", a grouped
conv's channels "3*D512", the biased qkv rows "3*D1536") and the slice bounds, the zeros
piece's pad amount, the depthwise groups and a shuffle's merged channels as dims, runs as
PyTorch through spec_torch, and passes every simulated gate with its small shape shrinking those
dims (each file is sized so that at its literal extents the smallest cap is over the budget, or,
the shuffle, leaves a grouped conv one channel per group, which the lowering refuses)."""
import re
import unittest

import kforge_test_util as util
from kforge_py import fx_shape, kernelbench, spec_build, spec_torch

FILES = ["derived_qkv_split", "derived_dense_cat", "derived_flatten_linear",
         "derived_channel_shuffle", "derived_qkv_bias_cat"]


def derived(spec):
    return {k: v for k, v in spec["dims"].items() if isinstance(v, str)}


class DerivedExtents(util.ImportedFixtures):
    FILES = FILES

    def test_each_file_imports_and_matches_pytorch(self):
        self.assertEqual(self.rc, 0, self.log)
        for stem in FILES:
            with self.subTest(stem):
                self.assertRegex(self.log, r"ok: .*%s\.py: .*interpreter = PyTorch \(fp64\) at"
                                 % stem)

    def test_qkv_projection_and_slice_bounds_follow_n_embd(self):
        spec = self.spec("derived_qkv_split")
        rows = spec["inputs"]["c_attn_weight"]["shape"][0]
        expr = spec["dims"][rows]
        self.assertIsInstance(expr, str)
        self.assertEqual(fx_shape.spec_extent(expr, fx_shape.resolve_dims(spec["dims"])),
                         3 * spec["dims"]["n_embd"])
        slices = util.ops_of(spec, "slice")
        self.assertEqual(len(slices), 3)
        bounds = [(op.get("start", 0), op.get("end")) for op in slices]
        self.assertEqual(bounds, [(0, "n_embd"), ("n_embd", "2*n_embd"), ("2*n_embd", None)])

    def test_dense_cats_are_sums_of_their_pieces(self):
        spec = self.spec("derived_dense_cat")
        d = derived(spec)
        self.assertTrue(d, spec["dims"])
        for name, expr in d.items():
            self.assertRegex(expr, r"^num_features\+growth_rate(\+growth_rate_\d+)*$", name)
        norms = [spec["inputs"][op["inputs"][1]]["shape"][0] for op in spec["graph"]
                 if op["op"] == "batch_norm"] or \
            [t["shape"][0] for n, t in spec["inputs"].items() if n.endswith("_0_weight")]
        self.assertTrue(any(n in d for n in norms), norms)

    def test_flatten_features_are_the_product_of_the_pooled_dims(self):
        spec = self.spec("derived_flatten_linear")
        features = spec["inputs"]["fc_weight"]["shape"][1]
        expr = spec["dims"][features]
        self.assertIsInstance(expr, str)
        parts = expr.split("*")
        self.assertEqual(len(parts), 3, expr)
        (pool,) = util.ops_of(spec, "max_pool")
        self.assertEqual(parts[1:], pool["out_dims"])
        (dw,) = [op for op in util.ops_of(spec, "conv2d") if op.get("groups", 1) != 1]
        self.assertEqual(dw["groups"], spec["inputs"]["conv_weight"]["shape"][0])

    def test_shuffle_merge_and_grouped_conv_channels_are_dims(self):
        # as numbers (a merge to 1536, weights naming 512 channels per group apart) they tied
        # the channels to full size: the old spec found no small shape
        spec = self.spec("derived_channel_shuffle")
        d = derived(spec)
        split, merge = util.ops_of(spec, "reshape")
        self.assertEqual(split["shape"][1], 3)
        shuffled = merge["shape"][1]
        self.assertIsInstance(shuffled, str)
        grouped = [op for op in util.ops_of(spec, "conv2d") if op.get("groups") == 3]
        self.assertEqual(len(grouped), 2)
        for op in grouped:
            per_group = spec["inputs"][op["inputs"][1]]["shape"][1]
            self.assertIn(f"3*{per_group}", d.values(), d)
        self.assertEqual(d[shuffled], "3*" + spec["inputs"][grouped[1]["inputs"][1]]["shape"][1])

    def test_qkv_bias_zeros_piece_is_a_pad_by_the_v_bias_dim(self):
        # cat(q_bias, zeros_like(v_bias), v_bias): a pad of v_bias by its own dim, q_bias and
        # v_bias one dim, the projection's rows three times it; as numbers the pad tied the
        # channels to full size (KernelBench L3 30 SwinTransformerV2)
        spec = self.spec("derived_qkv_bias_cat")
        dim = spec["inputs"]["v_bias"]["shape"][0]
        self.assertIsInstance(dim, str)
        self.assertEqual(spec["inputs"]["q_bias"]["shape"], [dim])
        (pad,) = util.ops_of(spec, "pad")
        self.assertEqual(pad["pads"], [[dim, 0]])
        self.assertEqual(spec["dims"][pad["out_names"][0]], "2*" + dim)  # not a number
        rows = spec["inputs"]["qkv_weight"]["shape"][0]
        self.assertEqual(spec["dims"][rows], "3*" + dim)
        # and that dim is the heads (a number the file wrote) times the head dim, named
        heads, head = spec["dims"][dim].split("*")
        self.assertEqual((heads, spec["dims"][head]), ("12", 128))

    def test_spec_torch_runs_them_as_pytorch(self):
        for stem in FILES:
            with self.subTest(stem):
                loaded = kernelbench.load(util.sweep_fixture(stem), overrides=SMALL[stem])
                spec, conv = spec_build.build(loaded, "t", "")
                feeds = spec_build.feeds(loaded, conv)
                got = spec_torch.make_forward(spec)(*[feeds[n] for n in spec["inputs"]])[0]
                want = loaded.model(*loaded.inputs)
                self.assertLess((got - want).abs().max().item(), 1e-3)

    def test_each_file_passes_the_gates_at_a_small_shape_that_shrinks_them(self):
        for stem in FILES:
            with self.subTest(stem):
                r = self.optimize_sim(stem)
                log = r.stdout + r.stderr
                self.assertEqual(r.returncode, 0, log)
                self.assertNotIn("no small shape fits", log)
                self.assertIn("gates: static(ok)", log)
                self.assertRegex(log, r"correctness_small\(ok")


SMALL = {"derived_qkv_split": {"batch_size": 2, "seq_len": 8, "n_embd": 32, "n_head": 4},
         "derived_dense_cat": {"batch_size": 2, "num_features": 8, "growth_rate": 4,
                               "height": 8, "width": 8},
         "derived_flatten_linear": {"batch_size": 2, "channels": 8, "height": 64, "width": 64},
         "derived_channel_shuffle": {"batch_size": 2, "height": 4, "width": 4},
         "derived_qkv_bias_cat": {"batch_size": 2, "tokens": 8, "width": 32, "heads": 4}}


if __name__ == "__main__":
    unittest.main()
