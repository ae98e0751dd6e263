"""Index and mask constructs (issue 25): torch.argmax / argmin (int64 outputs, compared exactly),
masked_fill and torch.where with bool masks from get_inputs(), a masked cumsum (x * mask),
tril / triu around a matmul, F.cross_entropy and nn.CrossEntropyLoss with int64 targets. Each
example imports and matches PyTorch through the fp64 interpreter; what the spec cannot take is
refused by name (a float mask, targets past the last class, an argmax without dim, label
smoothing, class weights, an index that depends on the inputs); a row gather by a constant index
(a buffer) is a one-hot matmul; spec -> torch (the baseline) runs the imported specs."""
import os
import tempfile
import unittest

import torch

import kforge_test_util as util
from test_fx_import import module_file

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "index_errors")
EXAMPLES = ["60_argmax_argmin", "61_masked_fill_where", "62_masked_cumsum", "63_cross_entropy",
            "64_triangular_matmul", "65_cross_entropy_module"]


def ops(spec):
    return [o["op"] for o in spec["graph"]]


class IndexExamples(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        files = [util.example(s) for s in EXAMPLES] + \
            [os.path.join(FIXTURES, f) for f in ("float_mask.py", "target_out_of_range.py")]
        cls.r = util.kforge("import", "kernelbench", *files, "-o", cls.tmp.name)
        cls.lines = {}
        for line in cls.r.stdout.splitlines():
            for stem in EXAMPLES + ["float_mask", "target_out_of_range"]:
                if f"/{stem}.py: " in line:
                    cls.lines[stem] = line

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def spec(self, stem):
        from kforge_py import spec_build
        return util.load_json(os.path.join(self.tmp.name, spec_build.problem_name(stem) + ".json"))

    def test_examples_import_and_match_pytorch(self):
        self.assertIn("imported 6 of 8 file(s)", self.r.stdout, self.r.stdout + self.r.stderr)
        for stem in EXAMPLES:
            with self.subTest(stem):
                line = self.lines[stem]
                self.assertTrue(line.startswith("ok: "), line)
                self.assertIn("interpreter = PyTorch (fp64) at", line)

    def test_ops_dtypes_and_attributes(self):
        s = self.spec("60_argmax_argmin")
        self.assertEqual(ops(s), ["argmax", "argmin"])
        self.assertEqual(s["graph"][1].get("keepdim"), True)
        s = self.spec("61_masked_fill_where")
        self.assertEqual(s["inputs"]["mask"]["dtype"], "bool")
        self.assertEqual(s["inputs"]["row_mask"]["shape"], ["batch_size", 1])
        fill = next(o for o in s["graph"] if o["op"] == "masked_fill")
        self.assertEqual(fill["value"], "-inf")
        self.assertIn("where", ops(s))
        s = self.spec("62_masked_cumsum")
        self.assertEqual(ops(s), ["mul", "cumsum"])
        s = self.spec("63_cross_entropy")
        self.assertEqual(ops(s), ["cross_entropy"])
        self.assertEqual(s["inputs"]["targets"]["dtype"], "i64")
        s = self.spec("64_triangular_matmul")
        self.assertEqual(ops(s), ["matmul", "triu", "tril"])
        self.assertEqual(s["graph"][2]["diagonal"], -1)
        s = self.spec("65_cross_entropy_module")
        self.assertEqual(ops(s), ["linear", "cross_entropy", "scale"])  # reduction="sum"

    def test_float_mask_and_out_of_range_targets_are_refused(self):
        self.assertIn("FAILED", self.lines["float_mask"])
        self.assertRegex(self.lines["float_mask"], "fails in PyTorch on its own inputs: .*("
                                                   "boolean masks|predicate to be bool)")
        line = self.lines["target_out_of_range"]
        self.assertIn("FAILED", line)
        self.assertRegex(line, r"target \d+ at index \d+ is out of range: cross_entropy's "
                               r"targets are class indices in \[0, 32\)")

    def test_spec_to_torch_matches_the_interpreter(self):
        # the baseline's module (spec_torch) on the imported specs, against kforge interpret
        from kforge_py import spec_torch
        for stem in ("60_argmax_argmin", "61_masked_fill_where", "62_masked_cumsum",
                     "63_cross_entropy"):
            with self.subTest(stem):
                spec = self.spec(stem)
                small = {k: min(v, 24) for k, v in spec["dims"].items()}
                inputs = spec_torch.make_inputs(spec, dims=small, seed=3)
                spec_small = dict(spec, dims=dict(spec["dims"], **small))
                outs = spec_torch.make_forward(spec_small)(*[x.double() if x.is_floating_point()
                                                             else x for x in inputs])
                import json
                with tempfile.TemporaryDirectory() as d:
                    in_path, out_path = os.path.join(d, "in.json"), os.path.join(d, "out.json")
                    with open(in_path, "w") as f:
                        json.dump({n: t.double().reshape(-1).tolist()
                                   for n, t in zip(spec["inputs"], inputs)}, f)
                    spec_path = os.path.join(d, "s.json")
                    with open(spec_path, "w") as f:
                        json.dump(spec, f)
                    r = util.kforge("interpret", spec_path, "--inputs", in_path, "-o", out_path,
                                    "--dims", ",".join(f"{k}={v}" for k, v in small.items()))
                    self.assertEqual(r.returncode, 0, r.stderr)
                    got = util.load_json(out_path)["outputs"]
                for name, ref in zip(spec["outputs"], outs):
                    data = torch.tensor([float(v) for v in got[name]["data"]], dtype=torch.float64)
                    if ref.is_floating_point():
                        torch.testing.assert_close(data, ref.double().reshape(-1), rtol=1e-9,
                                                   atol=1e-9, equal_nan=True)
                    else:
                        self.assertTrue(torch.equal(data, ref.double().reshape(-1)), name)


class IndexRefusals(unittest.TestCase):
    def test_what_the_spec_cannot_take_is_refused_by_name(self):
        for body, pattern in [
                ("return torch.argmax(x)", "argmax without dim"),
                ("return F.cross_entropy(x, x.argmax(1), label_smoothing=0.1)", "label_smoothing"),
                ("return F.cross_entropy(x, x.argmax(1), reduction='none')", "reduction='none'"),
                ("return F.cross_entropy(x, x.argmax(1), ignore_index=3)", "ignore_index 3"),
                # a comparison is its 0/1 indicator (fx_compare): returned, it is refused
                ("return x > 0", "a comparison's bool result")]:
            with self.subTest(body):
                util.assert_build_refused(self, module_file(body), "kb_index", pattern)

    def test_a_wrong_axis_of_an_index_output_is_caught_exactly(self):
        util.assert_tampering_caught(self, "return torch.argmax(x, dim=1)", [("axis", 2)],
                                     "kb_index_tamper", globals_text="dim = 64",
                                     inputs="torch.rand(batch_size, dim, dim)")


class ConstantIndexGather(unittest.TestCase):
    def test_a_bias_table_gathered_by_a_buffer_index_in_shifted_windows(self):
        # fixtures/networks/shifted_window_bias.py: table[rel_index.view(-1)] with rel_index a
        # buffer becomes a one-hot matmul whose one-hot is folded from the buffer (the index
        # itself is no longer an input); torch.roll two slices and a cat per dim. Was refused:
        # "indexing with Tensor (advanced indexing)" (KernelBench L3 30_SwinTransformerV2)
        out, spec = util.import_fixture(self, "shifted_window_bias")
        self.assertIn("interpreter = PyTorch (fp64) at", out)
        hot = [n for n in spec["inputs"] if n.endswith("_one_hot")]
        self.assertEqual(len(hot), 1, spec["inputs"])
        self.assertEqual(spec["inputs"][hot[0]]["dtype"], "f32")
        self.assertFalse([n for n, t in spec["inputs"].items() if t["dtype"] == "i64"])
        gather = next(op for op in spec["graph"] if op["op"] == "matmul" and hot[0] in op["inputs"])
        self.assertEqual(gather["inputs"][1], "table")
        self.assertEqual([op["op"] for op in spec["graph"]].count("cat"), 4)  # two rolls of two

    def test_an_index_that_depends_on_the_input_is_still_refused(self):
        util.assert_build_refused(self, module_file("return x[x.argmax(1)]"), "kb_index",
                                  "indexing with Tensor")


if __name__ == "__main__":
    unittest.main()
