"""Attention from KernelBench-format files to the fused attention kernel (issue 25): the
repository's own files under tests/planner/attention_kb (F.scaled_dot_product_attention, a
causal mask written with masked_fill(-inf), an additive float mask with a consumer after the
output, a small multi-head block; causal masks from a buffer, from SDPA's is_causal and from
~tril(ones) made in forward, and a constant mask that is no triangle) import, constant
triangles in masked_fill's structured form (fx_mask) and scattered ones as bool inputs, the
planner fuses each attention pattern into one
attention kernel (the block's projections as gemm kernels, its heads split and merged by copy
kernels), and the start program passes every gate on the simulated device (a labelled test
double: the fp64 interpreter and the time model); a mask of the wrong dtype is refused."""
import json
import os
import shutil
import tempfile
import unittest

from kforge_test_util import SOURCE_DIR, kforge, load_json

FILES = os.path.join(SOURCE_DIR, "tests", "planner", "attention_kb")


class ImportAttention(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.out = tempfile.mkdtemp(prefix="kforge_attention_")
        files = [os.path.join(FILES, f) for f in sorted(os.listdir(FILES)) if f.endswith(".py")]
        cls.imported = kforge("import", "kernelbench", *files, "-o", cls.out)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.out, ignore_errors=True)

    def spec(self, stem):
        path = os.path.join(self.out, stem + ".json")
        self.assertTrue(os.path.exists(path), self.imported.stdout + self.imported.stderr)
        return path

    def test_all_import(self):
        self.assertEqual(self.imported.returncode, 0, self.imported.stdout + self.imported.stderr)
        self.assertIn("imported 11 of 11", self.imported.stdout + self.imported.stderr)
        ops = [op["op"] for op in load_json(self.spec("causal_masked"))["graph"]]
        self.assertEqual(ops, ["matmul", "scale", "masked_fill", "softmax", "matmul"])

    def masked_fill(self, stem):
        spec = load_json(self.spec(stem))
        fills = [op for op in spec["graph"] if op["op"] == "masked_fill"]
        self.assertEqual(len(fills), 1, spec["graph"])
        return spec, fills[0]

    def test_constant_triangles_become_structured_masks(self):
        # each imported with the numeric check against PyTorch (fp64) passing: "ok:" lines
        out = self.imported.stdout + self.imported.stderr
        for stem in ("causal_masked", "gpt_block_causal", "sdpa_causal", "segsum_tril"):
            with self.subTest(stem=stem):
                self.assertRegex(out, r"ok: .*%s\.py: .*max \|diff\|" % stem)
                spec, fill = self.masked_fill(stem)
                # causal: key j after query i (j - i >= 1) filled; no mask tensor read
                self.assertEqual((fill["inputs"][1:], fill.get("mask"), fill.get("diagonal")),
                                 ([], "triu", 1), fill)
                self.assertFalse([n for n, t in spec["inputs"].items() if t["dtype"] == "bool"],
                                 spec["inputs"])

    def test_a_scattered_constant_mask_stays_data(self):
        spec, fill = self.masked_fill("scattered_mask")
        self.assertNotIn("mask", fill)
        self.assertEqual(len(fill["inputs"]), 2, fill)
        self.assertEqual(spec["inputs"][fill["inputs"][1]]["dtype"], "bool")

    def test_causal_plans_through_every_gate(self):
        # (segsum_tril has no attention: test_segsum_pairwise_difference_plans)
        for stem, program in (("sdpa_causal", "mask triu diagonal 1"),
                              ("causal_masked", "mask triu diagonal 1"),
                              ("gpt_block_causal", "mask triu diagonal 1"),
                              ("scattered_mask", None)):
            with self.subTest(stem=stem):
                out = os.path.join(self.out, stem + "_plan")
                r = kforge("optimize", self.spec(stem), "--device", "sim", "--rounds", "1",
                           "--db", os.path.join(self.out, stem + "_plan.db"), "--out", out)
                text = r.stdout + r.stderr
                self.assertEqual(r.returncode, 0, text)
                self.assertIn("attention -> ", text)
                self.assertIn("correctness_small(ok) correctness_full(ok)", text)
                with open(os.path.join(out, "best.kf")) as f:
                    kf = f.read()
                if program:
                    self.assertIn(program, kf)
                else:  # the scattered mask is read as a tensor
                    self.assertNotIn("mask triu", kf)
                    self.assertRegex(kf, r"attention\([^)]*, pad\[")

    def test_segsum_pairwise_difference_plans(self):
        # c[..., :, None] - c[..., None, :] of one cumsum: the second unsqueeze names its axis
        # apart (length_1, python/kforge_py/spec_dims.py), so the broadcast copy stores
        # [B,H,length,length_1] (one name twice, it read as the diagonal and was refused)
        spec = load_json(self.spec("segsum_tril"))
        targets = [op["shape"] for op in spec["graph"] if op["op"] == "reshape"]
        self.assertEqual(targets, [["batch", "heads", "length", 1],
                                   ["batch", "heads", 1, "length_1"]])
        r = kforge("optimize", self.spec("segsum_tril"), "--device", "sim", "--rounds", "1",
                   "--db", os.path.join(self.out, "segsum_plan.db"))
        text = r.stdout + r.stderr
        self.assertEqual(r.returncode, 0, text)
        self.assertIn("synthesized one from the problem", text)
        self.assertIn("correctness_small(ok) correctness_full(ok)", text)

    def plan(self, stem):
        out = os.path.join(self.out, stem + "_plan")
        r = kforge("optimize", self.spec(stem), "--device", "sim", "--rounds", "1",
                   "--db", os.path.join(self.out, stem + "_plan.db"), "--out", out)
        text = r.stdout + r.stderr
        self.assertEqual(r.returncode, 0, text)
        self.assertIn("correctness_small(ok) correctness_full(ok)", text)
        with open(os.path.join(out, "best.kf")) as f:
            return text, f.read()

    def test_multihead_attention_masks_import_and_plan(self):
        # nn.MultiheadAttention's attn_mask / key_padding_mask (True: not attended): each file
        # matched PyTorch in fp64 at import ("ok:"), and plans through every gate
        out = self.imported.stdout + self.imported.stderr
        for stem in ("mha_bool_masks", "mha_float_mask_seq_first", "mha_causal_buffer"):
            self.assertRegex(out, r"ok: .*%s\.py: .*max \|diff\|" % stem)
        # two bool input masks: two selects in one map kernel between the scores gemm and
        # the softmax (the fused attention kernel takes one mask)
        spec = load_json(self.spec("mha_bool_masks"))
        fills = [op for op in spec["graph"] if op["op"] == "masked_fill"]
        self.assertEqual(len(fills), 2)
        self.assertEqual(sorted(n for n, t in spec["inputs"].items() if t["dtype"] == "bool"),
                         ["attn_mask", "pad"])
        _, kf = self.plan("mha_bool_masks")
        self.assertRegex(kf, r"masked_fill attn_mask\[seq,seq_1\] -inf; "
                             r"masked_fill pad\[batch,seq_1\] -inf")
        # a float mask, sequence first: added to the scores inside the fused attention kernel
        spec = load_json(self.spec("mha_float_mask_seq_first"))
        self.assertTrue([op for op in spec["graph"] if op["op"] == "add"
                         and "bias" in op["inputs"]])
        text, kf = self.plan("mha_float_mask_seq_first")
        self.assertIn("attention -> ", text)
        self.assertRegex(kf, r"attention\([^)]*, bias\[")
        # a causal buffer: the structured mask of the fused kernel, no bool input left
        spec = load_json(self.spec("mha_causal_buffer"))
        self.assertFalse([n for n, t in spec["inputs"].items() if t["dtype"] == "bool"])
        text, kf = self.plan("mha_causal_buffer")
        self.assertIn("mask triu diagonal 1", kf)

    def test_multihead_attention_weights_and_bad_masks_are_refused(self):
        from kforge_test_util import kernelbench_file
        init = "        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)"
        cases = (
            ("return self.attn(x, x, x)[1]", "torch.randn(2, 8, 16)",
             "attention weights of attn .*only the output"),
            ("return self.attn(x, x, x, attn_mask=torch.zeros(8, 8), is_causal=True)[0]",
             "torch.randn(2, 8, 16)", None),
        )
        for forward, inputs, pattern in cases:
            path = kernelbench_file(init, forward, inputs, "")
            try:
                r = kforge("import", "kernelbench", path, "-o", self.out)
            finally:
                os.unlink(path)
            if pattern is None:  # is_causal with the mask given: the mask is applied
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                continue
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertRegex(r.stdout, "FAILED: .*" + pattern)
            self.assertNotIn("Traceback", r.stdout + r.stderr)

    def test_wrong_mask_dtype_is_refused(self):
        spec, fill = self.masked_fill("scattered_mask")
        spec["inputs"][fill["inputs"][1]]["dtype"] = "f32"  # masked_fill's mask must be bool
        path = os.path.join(self.out, "bad_mask.json")
        with open(path, "w") as f:
            json.dump(spec, f)
        r = kforge("optimize", path, "--device", "sim", "--rounds", "0")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("bool", r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()
