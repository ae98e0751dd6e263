"""Data movement that the copy kernel kind carries (planner/plan_view.cpp, codegen/lower_copy.cpp):
our own KernelBench-format files import (checked against PyTorch) and plan on the simulated
device - a dense block's cats of two to four tensors along channels (a copy kernel each), a
channel shuffle (view, transpose, view: one copy kernel reading through the split and storing
the merge), permutes feeding a Linear and a bmm (a copy kernel each), a flatten into a Linear
after a pool-free map (a reshape copy) and strided / indexed slices."""
import os
import re
import tempfile
import unittest

import kforge_test_util as util

FILES = ["100_dense_cat_channels", "101_channel_shuffle", "102_permute_gemm",
         "103_flatten_slice_linear"]


def fusion_plan(spec):
    r = util.kforge("optimize", spec, "--device", "sim", "--rounds", "0",
                    "--db", os.path.join(os.path.dirname(spec), "plan.db"))
    m = re.search(r"fusion plan: (.*)\)", r.stdout + r.stderr)
    return m.group(1) if m else "(no plan) " + r.stdout + r.stderr


class CopyImports(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="kforge_copy_")
        r = util.kforge("import", "kernelbench", *[util.example(f) for f in FILES], "-o", cls.dir)
        cls.log = r.stdout + r.stderr
        cls.rc = r.returncode

    def spec(self, stem):
        return os.path.join(self.dir, "kb_" + stem + ".json")

    def test_every_file_imports_checked_against_pytorch(self):
        self.assertEqual(self.rc, 0, self.log)
        self.assertIn("imported 4 of 4", self.log)

    def test_dense_cats_are_copy_kernels(self):
        plan = fusion_plan(self.spec("100_dense_cat_channels"))
        self.assertEqual(plan.count("copy ->"), 3, plan)
        self.assertEqual(plan.count("conv2d"), 4, plan)

    def test_channel_shuffle_is_one_copy(self):
        plan = fusion_plan(self.spec("101_channel_shuffle"))
        self.assertEqual(plan.count("copy ->"), 1, plan)
        self.assertEqual(plan.count("conv2d"), 2, plan)

    def test_permutes_feed_gemms(self):
        plan = fusion_plan(self.spec("102_permute_gemm"))
        self.assertEqual(plan.count("copy ->"), 2, plan)
        self.assertEqual(plan.count("gemm"), 2, plan)

    def test_flatten_and_slices_plan(self):
        spec = util.load_json(self.spec("103_flatten_slice_linear"))
        reshapes = [op["shape"] for op in spec["graph"] if op["op"] == "reshape"]
        self.assertIn(["batch_size", spec["inputs"]["fc_weight"]["shape"][1]], reshapes)
        plan = fusion_plan(self.spec("103_flatten_slice_linear"))
        self.assertIn("gemm {add fc_bias} -> fc", plan)
        self.assertIn("copy {sigmoid}", plan)


if __name__ == "__main__":
    unittest.main()
