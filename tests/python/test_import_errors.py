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


if __name__ == "__main__":
    unittest.main()
