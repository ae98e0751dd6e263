"""The importer's degeneracy test (kforge_py/degeneracy.py) on our own example files: a network
that is degenerate only at the reduced check sizes imports (the test runs again at larger
sizes); a weakly input-dependent recurrence imports with a tolerance tight enough that a kernel
writing a constant fails the gate while the fp32 model passes it; outputs that do not depend on
the inputs above the policy's noise, or are constant, stay refused with the numbers."""
import math
import os
import tempfile
import unittest

import numpy as np
import torch

import kforge_test_util as util
from kforge_py import degeneracy, import_check, kernelbench, spec_build

STEMS = ["10_degenerate_gemm_max", "110_collapse_at_tiny_sizes", "111_weak_recurrence",
         "112_degenerate_below_noise"]


def band(spec, ref):
    """The gate's band for an output through sums: atol + rtol * max(|ref|, rms(ref))."""
    atol, rtol = spec_build.tolerance(spec)
    return atol + rtol * np.maximum(np.abs(ref), math.sqrt(float(np.mean(ref * ref))))


def run(loaded, inputs, dtype):
    return import_check.torch_outputs(loaded, inputs, dtype)[0].double().reshape(-1).numpy()


class Degeneracy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.r = util.kforge("import", "kernelbench", *[util.example(s) for s in STEMS],
                            "-o", cls.tmp.name)
        cls.lines = {}
        for line in cls.r.stdout.splitlines():
            for stem in STEMS:
                if line.split(": ")[1:2] == [util.example(stem)]:
                    cls.lines[stem] = (line.split(":")[0], line)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def spec(self, stem):
        return util.load_json(os.path.join(self.tmp.name, spec_build.problem_name(stem) +
                                           ".json"))

    def test_summary(self):
        self.assertEqual(self.r.returncode, 1, self.r.stdout + self.r.stderr)
        self.assertIn("imported 2 of 4 file(s)", self.r.stdout)

    def test_collapse_at_tiny_sizes_imports_after_the_retry(self):
        status, msg = self.lines["110_collapse_at_tiny_sizes"]
        self.assertEqual(status, "ok", msg)
        self.assertIn("the output looked degenerate at the reduced sizes", msg)
        # 512 x 3 x 128 x 128 inputs are past the retry's limit: the batch alone is reduced
        self.assertIn("it depends on the inputs at the file's sizes with the batch reduced "
                      "(batch_size=2, height=128, width=128)", msg)
        self.assertNotIn("atol", self.spec("110_collapse_at_tiny_sizes")["precision"])

    def test_collapse_fixture_is_degenerate_at_tiny_sizes(self):
        # what the retry corrects: at 16 x 16 the map collapses to 1 x 1 and the output is 0
        spec = self.spec("110_collapse_at_tiny_sizes")
        small = kernelbench.load(util.example("110_collapse_at_tiny_sizes"),
                                 overrides={"batch_size": 16, "height": 16, "width": 16})
        v = import_check.degenerate(spec, small, where=" at 16x16")
        self.assertIn("output relu is constant (0 everywhere at 16x16)", v.flag or "")

    def test_weak_recurrence_gets_a_tolerance_that_fails_a_constant(self):
        stem = "111_weak_recurrence"
        status, msg = self.lines[stem]
        self.assertEqual(status, "ok", msg)
        self.assertIn("depends on the inputs only weakly at the file's own sizes", msg)
        self.assertIn("would pass a constant output; atol = rtol tightened to", msg)
        spec = self.spec(stem)
        p = spec["precision"]
        self.assertEqual(p["atol"], p["rtol"])
        self.assertLess(p["atol"], 1e-4)
        self.assertEqual(util.kforge("check", os.path.join(
            self.tmp.name, spec_build.problem_name(stem) + ".json")).returncode, 0)
        loaded = kernelbench.load(util.example(stem))
        a_in, b_in = (kernelbench.draw_inputs(loaded, s) for s in (7, 8))
        ref_b = run(loaded, b_in, torch.float64)
        constant = run(loaded, a_in, torch.float64)  # a kernel that replays one output
        default = dict(spec, precision={"policy": "fp32_strict"})
        self.assertTrue(np.all(np.abs(constant - ref_b) <= band(default, ref_b)),
                        "the default band should pass the constant: the fixture is too strong")
        self.assertTrue(np.any(np.abs(constant - ref_b) > band(spec, ref_b)))
        fp32 = run(loaded, b_in, torch.float32)  # a correct fp32 kernel
        self.assertTrue(np.all(np.abs(fp32 - ref_b) <= band(spec, ref_b) / 10))

    def test_weak_recurrence_with_a_given_tolerance_or_tf32_is_refused(self):
        loaded = kernelbench.load(util.example("111_weak_recurrence"))
        spec = self.spec("111_weak_recurrence")

        def draw(seed):
            return kernelbench.draw_inputs(loaded, seed)

        given = dict(spec, precision={"policy": "fp32_strict", "atol": 1e-4, "rtol": 1e-4})
        v = degeneracy.assess(given, loaded, draw, "", import_check.torch_outputs)
        self.assertIn("the given atol=0.0001, rtol=0.0001 passes an output that is a constant",
                      v.flag or "")
        # tf32's rounding (fp32's error x 2^13) is above what the output moves by
        tf32 = dict(spec, precision={"policy": "tf32"})
        v = degeneracy.assess(tf32, loaded, draw, "", import_check.torch_outputs)
        self.assertIn("not measurably above the tf32 noise", v.flag or "")

    def test_below_noise_is_refused_with_the_numbers(self):
        status, msg = self.lines["112_degenerate_below_noise"]
        self.assertEqual(status, "FAILED", msg)
        self.assertRegex(msg, r"degenerate problem: output softmax is constant \(0.00195312 "
                              r"everywhere at the file's own sizes \(batch_size=64\)\): two "
                              r"random draws move it by at most [0-9.e-]+ .*not measurably "
                              r"above the fp32_strict noise")

    def test_constant_output_stays_flagged(self):
        status, msg = self.lines["10_degenerate_gemm_max"]
        self.assertEqual(status, "FAILED", msg)
        self.assertIn("degenerate problem: output gelu is constant (0 everywhere", msg)
        self.assertIn("exactly the same for two random draws", msg)

    def test_a_problem_the_check_cannot_reach_gets_the_test_in_pytorch_alone(self):
        # validate runs at_affordable_sizes where the interpreter check is past its limits
        for stem, want in (("112_degenerate_below_noise", "flag"),
                           ("111_weak_recurrence", "tol")):
            with self.subTest(stem):
                path = util.example(stem)
                loaded = kernelbench.load(path, meta=True)
                spec, conv = spec_build.build(loaded, spec_build.problem_name(stem), "")
                v = degeneracy.at_affordable_sizes(spec, conv, loaded, path,
                                                   import_check.degenerate)
                self.assertTrue(v.full)
                self.assertIsNotNone(getattr(v, want))
                self.assertIn("at the file's own sizes", v.flag or v.note)

    def test_elements_a_constant_must_miss(self):
        self.assertEqual(degeneracy._needed(10000, 1.0), 1)  # fp32_strict: one element fails
        self.assertEqual(degeneracy._needed(10 ** 6, 0.999), 2000)
        self.assertEqual(degeneracy._needed(100, 1.0, 0.01), 1)
        self.assertEqual(degeneracy._needed(10000, 1.0, 0.01), 100)
        self.assertEqual(degeneracy._needed(10 ** 6, 0.99, 0.01), 20000)
        self.assertAlmostEqual(degeneracy._round_down(2.17e-5), 2e-5)
        self.assertAlmostEqual(degeneracy._round_down(6.0e-7), 6e-7)


if __name__ == "__main__":
    unittest.main()
