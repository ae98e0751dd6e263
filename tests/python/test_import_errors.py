"""Bad input to `kforge import kernelbench` gives the right user or environment error."""
import os
import stat
import tempfile
import unittest

import kforge_test_util as util


def write(dirname, name, text):
    path = os.path.join(dirname, name)
    with open(path, "w") as f:
        f.write(text)
    return path


class ImportErrors(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_unknown_policy_is_a_user_error(self):
        r = util.kforge("import", "kernelbench", util.example("03_softmax"), "--policy", "fp64",
                        "-o", self.d)
        self.assertEqual(r.returncode, 2)
        self.assertIn('--policy: unknown policy "fp64"', r.stderr)

    def test_negative_tolerance_is_a_user_error(self):
        r = util.kforge("import", "kernelbench", util.example("03_softmax"), "--atol=-1",
                        "-o", self.d)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--atol: expected a finite number >= 0", r.stderr)

    def test_missing_python_is_an_environment_error(self):
        r = util.kforge("import", "kernelbench", util.example("03_softmax"), "-o", self.d,
                        env={"KFORGE_PYTHON": "/nonexistent/python"})
        self.assertEqual(r.returncode, 3)
        self.assertIn("KFORGE_PYTHON=/nonexistent/python is not an executable file", r.stderr)

    def test_python_without_torch_is_an_environment_error(self):
        # The same interpreter with site-packages switched off cannot import torch.
        import sys
        wrapper = write(self.d, "python-no-site", f"#!/bin/sh\nexec {sys.executable} -S \"$@\"\n")
        os.chmod(wrapper, stat.S_IRWXU)
        r = util.kforge("import", "kernelbench", util.example("03_softmax"), "-o", self.d,
                        env={"KFORGE_PYTHON": wrapper})
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("PyTorch is not installed", r.stderr)

    def test_bad_files_fail_one_by_one_and_the_batch_goes_on(self):
        no_model = write(self.d, "no_model.py", "import torch\ndef get_inputs(): return []\n")
        raising = write(self.d, "raising.py", "raise RuntimeError('boom')\n")
        syntax = write(self.d, "syntax.py", "def f(:\n")
        r = util.kforge("import", "kernelbench", os.path.join(self.d, "missing.py"), no_model,
                        raising, syntax, util.example("03_softmax"), "-o", self.d)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        out = r.stdout
        self.assertRegex(out, r"FAILED: \S+missing.py: cannot read")
        self.assertRegex(out, r"FAILED: \S+no_model.py: not KernelBench format: no `Model`")
        self.assertRegex(out, r"FAILED: \S+raising.py: running the file raised RuntimeError: boom")
        self.assertRegex(out, r"FAILED: \S+syntax.py: line 1: syntax error")
        self.assertRegex(out, r"ok: \S+03_softmax.py")
        self.assertIn("imported 1 of 5 file(s)", out)

    def test_untraceable_forward_is_named(self):
        src = ("import torch\nimport torch.nn as nn\n"
               "class Model(nn.Module):\n"
               "    def forward(self, x):\n"
               "        if x.sum() > 0:\n            return x.relu()\n        return x.exp()\n"
               "def get_inputs(): return [torch.randn(4, 8)]\n"
               "def get_init_inputs(): return []\n")
        path = write(self.d, "control_flow.py", src)
        r = util.kforge("import", "kernelbench", path, "-o", self.d)
        self.assertEqual(r.returncode, 1)
        self.assertIn("torch.fx cannot trace Model.forward", r.stdout)

    def test_instance_norm_with_running_stats_is_refused_by_name(self):
        src = ("import torch\nimport torch.nn as nn\n"
               "class Model(nn.Module):\n"
               "    def __init__(self):\n        super().__init__()\n"
               "        self.n = nn.InstanceNorm2d(8, track_running_stats=True)\n"
               "    def forward(self, x):\n        return self.n(x)\n"
               "def get_inputs(): return [torch.randn(2, 8, 4, 4)]\n"
               "def get_init_inputs(): return []\n")
        path = write(self.d, "inorm_stats.py", src)
        r = util.kforge("import", "kernelbench", path, "-o", self.d)
        self.assertEqual(r.returncode, 1)
        self.assertIn("instancenorm2d with track_running_stats is not supported", r.stdout)


class InterpretErrors(unittest.TestCase):
    """`kforge interpret`, the fp64 reference the importer checks against."""

    SPEC = os.path.join(util.SOURCE_DIR, "problems", "row_sum_f32.json")

    def run_with(self, inputs_text, *extra):
        with tempfile.TemporaryDirectory() as d:
            path = write(d, "in.json", inputs_text)
            return util.kforge("interpret", self.SPEC, "--inputs", path, *extra)

    def test_values_and_non_finite_round_trip(self):
        r = self.run_with('{"X": [1, 2.5, 4, "inf", 1, "nan"]}', "--dims", "R=2,C=3")
        self.assertEqual(r.returncode, 0, r.stderr)
        import json
        out = json.loads(r.stdout)
        self.assertEqual(out["outputs"]["Y"], {"shape": [2], "data": [7.5, "nan"]})

    def test_bad_inputs_are_user_errors(self):
        cases = [('{"X": [1, 2]}', ("--dims", "R=1,C=3"), "inputs.X: expected 3 values, got 2"),
                 ('{"X": [1, 2, "x"]}', ("--dims", "R=1,C=3"), "X[2]: expected a number"),
                 ("[1]", ("--dims", "R=1,C=3"), "expected a JSON object"),
                 ('{"X": [1]}', ("--dims", "R=x"), '"R=x" is not NAME=INTEGER'),
                 ('{"X": [1]}', ("--dims", "Q=3"), 'dims.Q: unknown dim "Q"'),
                 ('{"X": [1]}', (), "above its limit")]
        for text, extra, message in cases:
            with self.subTest(message):
                r = self.run_with(text, *extra)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn(message, r.stderr)


if __name__ == "__main__":
    unittest.main()
