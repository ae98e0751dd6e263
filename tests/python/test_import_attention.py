"""Attention from KernelBench-format files to the fused attention kernel (issue 25): the
repository's own files under tests/planner/attention_kb (F.scaled_dot_product_attention, a
causal mask written with masked_fill(-inf), an additive float mask with a consumer after the
output, a small multi-head block) import, the planner fuses each attention pattern into one
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
        self.assertIn("imported 4 of 4", self.imported.stdout + self.imported.stderr)
        ops = [op["op"] for op in load_json(self.spec("causal_masked"))["graph"]]
        self.assertEqual(ops, ["matmul", "scale", "masked_fill", "softmax", "matmul"])

    def test_fused_and_through_every_gate_on_the_simulated_device(self):
        for stem, plan in (("sdpa_plain", "fusion plan: k0 attention -> "),
                           ("causal_masked", "fusion plan: k0 attention -> "),
                           ("additive_mask", "fusion plan: k0 attention {mul} -> "),
                           # projections as gemms, heads split and merged by copy kernels
                           ("multihead_block", "k6 attention -> scaled_dot_product_attention")):
            with self.subTest(stem=stem):
                db = os.path.join(self.out, stem + ".db")
                r = kforge("optimize", self.spec(stem), "--device", "sim", "--rounds", "1",
                           "--db", db)
                text = r.stdout + r.stderr
                self.assertEqual(r.returncode, 0, text)
                self.assertIn(plan, text)
                self.assertIn("correctness_small(ok) correctness_full(ok)", text)

    def test_wrong_mask_dtype_is_refused(self):
        spec = load_json(self.spec("causal_masked"))
        spec["inputs"]["eq"]["dtype"] = "f32"  # masked_fill's mask must be bool
        path = os.path.join(self.out, "bad_mask.json")
        with open(path, "w") as f:
            json.dump(spec, f)
        r = kforge("optimize", path, "--device", "sim", "--rounds", "0")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("bool", r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()
