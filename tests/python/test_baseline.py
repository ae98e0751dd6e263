"""`kforge baseline`: without a GPU it exits 3 with a clear message; flags are checked; and the
storing path (carrier candidate, labels, device, shapes key) is exercised with a stand-in for
the Python timer that prints a fixed document, so the report reads the stored baselines."""
import json
import os
import stat
import sys
import tempfile
import unittest

import torch

import kforge_test_util as util

SPEC = os.path.join(util.SOURCE_DIR, "problems", "softmax_long_rows_f32.json")


def fake_timer(dirname, doc, rc=0):
    """An executable standing in for `python -m kforge_py.baseline ...`: prints `doc`."""
    doc_path = os.path.join(dirname, "doc.json")
    with open(doc_path, "w") as f:
        json.dump(doc, f)
    path = os.path.join(dirname, "fake-python")
    with open(path, "w") as f:
        f.write(f"#!/bin/sh\ncat {doc_path}\nexit {rc}\n")
    os.chmod(path, stat.S_IRWXU)
    return path


def document(problem, samples):
    modes = {}
    for mode, base in samples.items():
        xs = [base + i for i in range(60)]
        modes[mode] = {"status": "ok", "samples_ns": xs,
                       "clocks": [{"sm_clock_mhz": 1980, "mem_clock_mhz": 3201}] * 60}
    return {"tool": "kforge_py.baseline",
            "device": {"name": "NVIDIA H200", "uuid": "GPU-00000000-1111-2222-3333-444444444444",
                       "driver": "CUDA driver 13000", "compute_capability": "9.0"},
            "torch": "2.15.0", "torch_cuda": "13.2", "triton": "3.9.0",
            "protocol": {"iters": 60, "warmup": 10},
            "results": [{"spec": SPEC, "problem": problem, "policy": "fp32_strict",
                         "settings": {"fp32_strict": True, "cuda.matmul.allow_tf32": False,
                                      "cudnn.allow_tf32": False,
                                      "float32_matmul_precision": "highest"},
                         "modes": modes}]}


class WithoutGpu(unittest.TestCase):
    @unittest.skipIf(torch.cuda.is_available(), "this machine has a GPU")
    def test_no_gpu_exits_3(self):
        with tempfile.TemporaryDirectory() as d:
            r = util.kforge("baseline", SPEC, "--db", os.path.join(d, "k.db"), "--modes", "eager")
            self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
            self.assertIn("no CUDA GPU is visible to PyTorch", r.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "k.db")))

    def test_bad_flags_are_user_errors(self):
        r = util.kforge("baseline", SPEC, "--modes", "eager,jit")
        self.assertEqual(r.returncode, 2)
        self.assertIn('--modes: unknown mode "jit"', r.stderr)
        r = util.kforge("baseline", SPEC, "--iters", "10")
        self.assertEqual(r.returncode, 2)
        self.assertIn(">= 50", r.stderr)
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.json")
            with open(bad, "w") as f:
                f.write("{}")
            r = util.kforge("baseline", bad)
            self.assertEqual(r.returncode, 2)
            self.assertIn("missing key", r.stderr)


TINY = {"name": "tiny_linear_relu", "dims": {"M": 8, "N": 16, "K": 32},
        "inputs": {"X": {"shape": ["M", "K"], "dtype": "f32"},
                   "W": {"shape": ["N", "K"], "dtype": "f32", "param": True}},
        "graph": [{"op": "linear", "inputs": ["X", "W"], "output": "H"},
                  {"op": "relu", "inputs": ["H"], "output": "Y"}],
        "outputs": ["Y"], "precision": {"policy": "tf32"}}


class TimerOnHostClock(unittest.TestCase):
    """The timer's own code path (modes, torch.compile, precision settings, statistics, the
    document `kforge baseline` stores) run with its test-only host clock on the CPU."""

    def test_document_from_the_timer_is_stored(self):
        import subprocess
        with tempfile.TemporaryDirectory() as d:
            spec = os.path.join(d, "tiny.json")
            with open(spec, "w") as f:
                json.dump(TINY, f)
            r = subprocess.run([sys.executable, "-m", "kforge_py.baseline", "--device", "cpu",
                                "--modes", "eager,compile_default", "--iters", "50",
                                "--fp32-strict", spec], capture_output=True, text=True,
                               timeout=600)
            self.assertIn(r.returncode, (0, 1), r.stderr)
            doc = json.loads(r.stdout)
            res = doc["results"][0]
            self.assertEqual(res["settings"], {"fp32_strict": True,
                                               "cuda.matmul.allow_tf32": False,
                                               "cudnn.allow_tf32": False,
                                               "float32_matmul_precision": "highest"})
            # compiled modes run on inputs at fixed addresses (no CUDA-graph input copies)
            self.assertNotIn("static_input_addresses", res["modes"]["eager"])
            self.assertIn("static_input_addresses", res["modes"]["compile_default"])
            for mode in ("eager", "compile_default"):
                m = res["modes"][mode]
                if mode != "eager" and m["status"] == "failed":
                    # Inductor's CPU backend needs a C++ toolchain and Python headers; where
                    # they are missing the mode fails as a result, which is what is checked.
                    print(f"NOTE: compile_default failed on this host: {m['message'][:200]}")
                    continue
                self.assertEqual(m["status"], "ok", m)
                self.assertTrue(m.get("static_input_addresses", True), m)
                self.assertEqual(len(m["samples_ns"]), 50)
                self.assertLessEqual(m["max_abs_diff_vs_eager"], 1e-4)
                self.assertNotIn("stats", m)  # samples only: kforge computes the statistics
            py = fake_timer(d, doc)
            db = os.path.join(d, "k.db")
            r = util.kforge("baseline", spec, "--db", db, "--json", env={"KFORGE_PYTHON": py})
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            out = json.loads(r.stdout)["results"][0]
            stored = out["stored"]
            for mode in ("eager", "compile_default"):
                m = out["modes"][mode]
                if m["status"] != "ok":
                    continue
                st = m["stats"]  # common/stats.h's, over the samples the timer sent
                xs = sorted(m["samples_ns"])
                self.assertEqual(st["n"], len(xs))
                self.assertAlmostEqual(st["median_ns"], (xs[24] + xs[25]) / 2)
                self.assertLessEqual(st["ci95_median_ns"][0], st["median_ns"])
                self.assertGreaterEqual(st["ci95_median_ns"][1], st["median_ns"])
            exp = os.path.join(d, "run.json")
            r = util.kforge("db", "export", str(stored["run_id"]), "--db", db, "-o", exp)
            self.assertEqual(r.returncode, 0, r.stderr)
            text = open(exp).read()
            self.assertIn('"shapes_key": "K=32,M=8,N=16"', text.replace("\n", ""))


class Storing(unittest.TestCase):
    def test_measurements_are_stored_as_baselines(self):
        name = util.load_json(SPEC)["name"]
        with tempfile.TemporaryDirectory() as d:
            py = fake_timer(d, document(name, {"eager": 10000, "compile_default": 8000}))
            db = os.path.join(d, "k.db")
            r = util.kforge("baseline", SPEC, "--db", db, "--json", env={"KFORGE_PYTHON": py})
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            out = json.loads(r.stdout)
            stored = out["results"][0]["stored"]
            run_id = stored["run_id"]
            # the statistics are kforge's (common/stats.h): 60 samples base..base+59
            st = out["results"][0]["modes"]["eager"]["stats"]
            self.assertEqual((st["n"], st["median_ns"], st["iqr_ns"]), (60, 10029.5, 29.5))
            self.assertLess(st["ci95_median_ns"][0], 10029.5)
            self.assertGreater(st["ci95_median_ns"][1], 10029.5)
            exp = os.path.join(d, "run.json")
            r = util.kforge("db", "export", str(run_id), "--db", db, "-o", exp)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            text = open(exp).read()
            for needle in ('"baseline:pytorch"', '"baseline:eager"', '"baseline:compile_default"',
                           "GPU-00000000-1111-2222-3333-444444444444", '"full"',
                           "torch 2.15.0 (CUDA 13.2) / triton 3.9.0"):
                self.assertIn(needle, text)
            # Storing again into the same run reuses the carrier candidate.
            r2 = util.kforge("baseline", SPEC, "--db", db, "--run", str(run_id), "--json",
                             env={"KFORGE_PYTHON": py})
            self.assertEqual(r2.returncode, 0, r2.stderr)
            s2 = json.loads(r2.stdout)["results"][0]["stored"]
            self.assertEqual((s2["run_id"], s2["candidate_id"]), (run_id, stored["candidate_id"]))
            self.assertNotEqual(s2["evaluation_id"], stored["evaluation_id"])
            rep_dir = os.path.join(d, "rep")
            rep = util.kforge("report", str(run_id), "--db", db, "--format", "json",
                              "--out", rep_dir)
            self.assertEqual(rep.returncode, 0, rep.stdout + rep.stderr)
            reports = [os.path.join(rep_dir, f) for f in os.listdir(rep_dir)]
            text = "".join(open(f).read() for f in reports if f.endswith(".json"))
            self.assertIn("compile_default", text)

    def test_latest_run_attaches_to_the_newest_run_of_the_problem(self):
        name = util.load_json(SPEC)["name"]
        with tempfile.TemporaryDirectory() as d:
            db = os.path.join(d, "k.db")
            py = fake_timer(d, document(name, {"eager": 10000}))
            ids = []
            for _ in range(2):  # two runs over the problem; the newer one must get the samples
                r = util.kforge("baseline", SPEC, "--db", db, "--json", env={"KFORGE_PYTHON": py})
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                ids.append(json.loads(r.stdout)["results"][0]["stored"]["run_id"])
            self.assertNotEqual(ids[0], ids[1])
            r = util.kforge("baseline", SPEC, "--db", db, "--latest-run", "--json",
                            env={"KFORGE_PYTHON": py})
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertEqual(json.loads(r.stdout)["results"][0]["stored"]["run_id"], max(ids))
            r = util.kforge("baseline", SPEC, "--db", db, "--latest-run", "--run", str(ids[0]),
                            env={"KFORGE_PYTHON": py})
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertIn("exclude each other", r.stderr)

    def test_run_on_another_device_is_refused(self):
        name = util.load_json(SPEC)["name"]
        with tempfile.TemporaryDirectory() as d:
            db = os.path.join(d, "k.db")
            py = fake_timer(d, document(name, {"eager": 10000}))
            r = util.kforge("baseline", SPEC, "--db", db, "--json", env={"KFORGE_PYTHON": py})
            run_id = json.loads(r.stdout)["results"][0]["stored"]["run_id"]
            doc = document(name, {"eager": 10000})
            doc["device"]["uuid"] = "GPU-99999999-1111-2222-3333-444444444444"
            py2 = fake_timer(os.path.join(d), doc)
            r = util.kforge("baseline", SPEC, "--db", db, "--run", str(run_id),
                            env={"KFORGE_PYTHON": py2})
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertIn("--run: run", r.stderr)
            self.assertIn("this GPU is NVIDIA H200 GPU-9999", r.stderr)

    def test_failed_mode_is_exit_1_and_not_stored(self):
        name = util.load_json(SPEC)["name"]
        doc = document(name, {"eager": 10000})
        doc["results"][0]["modes"]["compile_max_autotune"] = {
            "status": "failed", "message": "BackendCompilerFailed: no triton"}
        with tempfile.TemporaryDirectory() as d:
            py = fake_timer(d, doc, rc=1)
            r = util.kforge("baseline", SPEC, "--db", os.path.join(d, "k.db"),
                            env={"KFORGE_PYTHON": py})
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn("compile_max_autotune", r.stdout)
            self.assertIn("failed: BackendCompilerFailed", r.stdout)


if __name__ == "__main__":
    unittest.main()
