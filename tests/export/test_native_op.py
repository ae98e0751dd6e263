"""The compiled op of exported packages (kforge_torch, python/kforge_py/export/csrc) without a
GPU: two problems exported with --no-build (one input fp32; three inputs bf16), each scenario in
its own process (native_child.py: one extension and one warning per process).

- kforge's CMake build of kforge_torch (KFORGE_TORCH_EXT_DIR/kforge_torch/) loads against the venv's torch
  and registers the op's CPU, CUDA and Autograd kernels (the dispatcher's own dump names
  kforge_torch.cpp; the fake kernel stays Python); opcheck, torch.compile(fullgraph=True) and
  the meta shapes pass through the fake kernel; every bad call raises from the C++ kernel the
  ValueError the Python check raises, word for word; backward raises.
- Without it: the reason said once per process (two packages, one warning) and the ctypes path
  registered (KFORGE_TORCH_EXT=off; no prebuilt module; no compiler for a build).
- The package's own build (torch.utils.cpp_extension.load of its csrc/, cached): loads, and a
  second process reuses the cache without compiling."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

try:
    import torch  # noqa: F401
except ImportError:  # scripts/setup.sh installs torch in .venv
    sys.exit(77)

SRC = os.environ["KFORGE_SOURCE_DIR"]
CLI = os.environ["KFORGE_CLI"]
EXT_DIR = os.environ.get("KFORGE_TORCH_EXT_DIR", "")
if not EXT_DIR or not os.path.exists(os.path.join(EXT_DIR, "kforge_torch", "libkforge_torch.so")):
    print(f"SKIP: kforge_torch was not built (KFORGE_TORCH_EXT_DIR={EXT_DIR!r}: no torch at "
          "configure time)")
    sys.exit(77)
CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "native_child.py")
PROBLEMS = ["row_sum_f32", "linear_bias_relu_bf16"]


class NativeOpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="kforge-native-test-")
        cls.folders = []
        for name in PROBLEMS:
            out = os.path.join(cls.tmp.name, name)
            r = subprocess.run([CLI, "export", os.path.join(SRC, "problems", name + ".json"),
                                "-o", out, "--no-build"], capture_output=True, text=True,
                               timeout=120)
            assert r.returncode == 0, r.stderr
            cls.folders.append(out)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def child(self, env, *flags):
        base = {k: v for k, v in os.environ.items()
                if k not in ("KFORGE_TORCH_EXT", "PYTHONPATH", "CXX")}
        base["KFORGE_TORCH_EXT_CACHE"] = os.path.join(self.tmp.name, "no_cache")
        r = subprocess.run([sys.executable, CHILD, *flags, *self.folders], capture_output=True,
                           text=True, timeout=300, env=dict(base, **env))
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr

    def check_calls(self, res, native):
        for r in res["results"]:
            with self.subTest(package=r["package"]):
                impl = "kforge_torch.cpp" if native else "custom_ops.py"
                self.assertEqual(r["keys"].get("Autograd[alias]"), impl, r["keys"])
                if native:
                    self.assertEqual(r["keys"].get("CUDA"), "kforge_torch.cpp", r["keys"])
                    self.assertEqual(r["keys"].get("CPU"), "kforge_torch.cpp", r["keys"])
                    self.assertEqual(r["keys"].get("Meta"), "__init__.py", r["keys"])
                else:
                    self.assertIsNone(r["native"])
                    self.assertIn("CompositeExplicitAutograd[alias]", r["keys"])
                for what, b in r["bad"].items():
                    self.assertEqual(b["op"], b["check"], what)
                    self.assertEqual(b["op"][0], "ValueError", what)
                self.assertIn("has dtype float64", r["bad"]["dtype"]["op"][1])
                self.assertIn("has shape", r["bad"]["shape"]["op"][1])
                self.assertIn("is on cpu", r["bad"]["cpu"]["op"][1])
                rc, words = r["entry_callback"]
                self.assertEqual(rc, 2, words)  # RuntimeError, the Python words
                self.assertIn("exported with --no-build", words)

    def test_cmake_built_extension(self):
        res, _ = self.child({"KFORGE_TORCH_EXT": "prebuilt", "PYTHONPATH": EXT_DIR}, "--full")
        self.assertEqual(res["warnings"], [])
        for r in res["results"]:
            self.assertEqual(r["native"], os.path.join(EXT_DIR, "kforge_torch", "libkforge_torch.so"))
        self.check_calls(res, native=True)
        full = res["results"][0]  # opcheck, compile, autograd (the first package)
        self.assertIsNone(full["opcheck"])
        self.assertIsNone(full["compile"])
        self.assertEqual(full["meta_shapes"], full["expected_shapes"])
        self.assertTrue(full["grad_out_requires_grad"])
        self.assertEqual(full["backward"][0], "RuntimeError")
        self.assertIn("is not implemented", full["backward"][1])

    def test_ctypes_path_and_reasons_said_once(self):
        res, _ = self.child({"KFORGE_TORCH_EXT": "off", "PYTHONPATH": EXT_DIR}, "--reasons")
        self.assertEqual(len(res["warnings"]), 1, res["warnings"])  # two packages, said once
        self.assertIn("KFORGE_TORCH_EXT=off", res["warnings"][0])
        self.assertIn("ctypes path", res["warnings"][0])
        self.check_calls(res, native=False)
        expected = ["no prebuilt kforge_torch",
                    "no C++ compiler: '/nonexistent/c++' is not on PATH",
                    "KFORGE_TORCH_EXT=sideways is not one of auto, prebuilt, build, off"]
        self.assertEqual(len(res["reasons"]), len(expected))
        for (none, *said), words in zip(res["reasons"], expected):
            self.assertTrue(none)
            self.assertEqual(len(said), 1, said)
            self.assertIn(words, said[0])

    def test_package_builds_its_own(self):
        """What a machine whose torch differs from the build machine's does: the package's
        csrc/ compiled by torch.utils.cpp_extension (about half a minute), then cached."""
        cache = os.path.join(self.tmp.name, "ext_cache")
        env = {"KFORGE_TORCH_EXT": "build", "KFORGE_TORCH_EXT_CACHE": cache}
        res, err = self.child(env)
        self.assertEqual(res["warnings"], [])
        self.assertIn("building the compiled op kforge_torch", err)
        self.assertTrue(res["results"][0]["native"].startswith(cache), res["results"][0])
        self.check_calls(res, native=True)
        res, err = self.child(env)
        self.assertNotIn("building the compiled op", err)
        self.assertTrue(res["results"][0]["native"].startswith(cache))
        # a process killed inside cpp_extension.load leaves its build lock behind, and a later
        # load would wait on it for ever: the cached library is loaded without it
        (tag,) = os.listdir(cache)
        open(os.path.join(cache, tag, "lock"), "w").close()
        res, err = self.child(env)
        self.assertNotIn("building the compiled op", err)
        self.assertTrue(res["results"][0]["native"].startswith(cache))


if __name__ == "__main__":
    unittest.main()
