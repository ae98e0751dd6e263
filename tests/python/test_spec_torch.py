"""spec -> torch (the module `kforge baseline` times) agrees with the fp64 interpreter on every
problem of the built-in suite (problems/*.json), at small dims, and the timing statistics."""
import glob
import json
import os
import tempfile
import unittest

import numpy as np
import torch

import kforge_test_util as util
from kforge_py import baseline, spec_torch


def interpret(spec_path, dims, inputs, workdir):
    in_path, out_path = os.path.join(workdir, "in.json"), os.path.join(workdir, "out.json")
    with open(in_path, "w") as f:
        json.dump({n: t.double().reshape(-1).tolist() for n, t in inputs.items()}, f)
    r = util.kforge("interpret", spec_path, "--inputs", in_path, "-o", out_path, "--dims",
                    ",".join(f"{k}={v}" for k, v in dims.items()))
    if r.returncode != 0:
        return None, r.stderr
    return util.load_json(out_path)["outputs"], None


class SuiteAgreement(unittest.TestCase):
    def test_every_suite_problem(self):
        specs = sorted(glob.glob(os.path.join(util.SOURCE_DIR, "problems", "*.json")))
        self.assertGreater(len(specs), 10)
        checked, no_small_shape = 0, []
        with tempfile.TemporaryDirectory() as work:
            for path in specs:
                spec = util.load_json(path)
                with self.subTest(spec["name"]):
                    got, err = None, None
                    for cap in (16, 32, 64):  # validity predicate: the interpreter's rebind
                        dims = {k: min(v, cap) for k, v in spec["dims"].items()}
                        args = spec_torch.make_inputs(spec, seed=3, dims=dims)
                        feed = dict(zip(spec["inputs"], args))
                        got, err = interpret(path, dims, feed, work)
                        if got is not None:
                            break
                    if got is None:
                        no_small_shape.append((spec["name"], err))
                        continue
                    ref = spec_torch.make_forward(spec)(*[a.double() for a in args])
                    for name, r in zip(spec["outputs"], ref):
                        data = np.array([float(x) for x in got[name]["data"]])
                        self.assertEqual(list(r.shape), got[name]["shape"])
                        np.testing.assert_allclose(data, r.reshape(-1).numpy(), rtol=1e-7,
                                                   atol=1e-9)
                    checked += 1
        print(f"checked {checked} suite problems; no small shape for {len(no_small_shape)}: "
              f"{no_small_shape}")
        self.assertGreaterEqual(checked, len(specs) - 2)

    def test_inputs_follow_dtypes_and_order(self):
        spec = {"dims": {"M": 4, "K": 8}, "inputs": {
            "X": {"shape": ["M", "K"], "dtype": "bf16"},
            "b": {"shape": [8], "dtype": "i32", "param": True}}}
        x, b = spec_torch.make_inputs(spec, dims={"M": 2})
        self.assertEqual((x.dtype, list(x.shape)), (torch.bfloat16, [2, 8]))
        self.assertEqual(b.dtype, torch.int32)

    def test_inputs_are_drawn_as_each_entry_says(self):
        # the baseline and the export harness draw what kforge's evaluator times on
        # (problem/inputs.h): normal unless the entry says uniform01 or heavy_tailed
        spec = {"dims": {"M": 64, "K": 64}, "inputs": {
            "A": {"shape": ["M", "K"], "dtype": "f16", "distribution": "uniform01"},
            "B": {"shape": ["M", "K"], "dtype": "f32"},
            "C": {"shape": ["M", "K"], "dtype": "f32", "distribution": "heavy_tailed"}}}
        a, b, c = spec_torch.make_inputs(spec, seed=5)
        self.assertEqual(a.dtype, torch.float16)
        self.assertGreaterEqual(float(a.min()), 0.0)
        self.assertLessEqual(float(a.max()), 1.0)  # [0, 1) rounded to f16
        self.assertLess(float(b.min()), 0.0)
        self.assertAlmostEqual(float(b.std()), 1.0, delta=0.1)
        self.assertGreater(float(c.abs().max()), 4.0)  # t(3): tails far past a normal's
        self.assertLessEqual(float(c.abs().max()), 1e4)
        # a spec without the key draws exactly as before (torch.randn, one generator)
        plain = {"dims": {"M": 3}, "inputs": {"X": {"shape": ["M"], "dtype": "f32"}}}
        g = torch.Generator().manual_seed(5)
        self.assertTrue(torch.equal(spec_torch.make_inputs(plain, seed=5)[0],
                                    torch.randn([3], generator=g)))
        with self.assertRaisesRegex(ValueError, "unknown distribution 'cauchy'"):
            spec_torch.make_inputs({"dims": {}, "inputs": {"X": {
                "shape": [2], "dtype": "f32", "distribution": "cauchy"}}})


class DeviceIdentity(unittest.TestCase):
    def test_uuid_is_written_as_the_cuda_device_writes_it(self):
        class Raw:
            bytes = list(range(16))
        self.assertEqual(baseline.uuid_string(Raw()), "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f")
        self.assertEqual(baseline.uuid_string("5B8B9D9E-0000-1111-2222-333333333333"),
                         "GPU-5b8b9d9e-0000-1111-2222-333333333333")
        self.assertEqual(baseline.uuid_string("GPU-ab"), "GPU-ab")


if __name__ == "__main__":
    unittest.main()
