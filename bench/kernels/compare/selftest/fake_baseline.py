#!/usr/bin/env python3
"""Test data for table.py: a `kforge baseline --json` document (the format of
python/kforge_py/baseline.py, stats made by its own sample_stats) whose medians are set
multiples of the kforge medians of a run folder. Device name says FAKE: never a measurement.

usage: fake_baseline.py RUN ROUND PROBLEM:MODE=RATIO... > RUN/baseline-fake-rROUND.json
  RATIO  torch median / kforge median of that round (e.g. 0.97: torch 3% faster)
"""
import json
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../../python"))
from kforge_py.baseline import sample_stats  # noqa: E402

run, rnd = sys.argv[1], int(sys.argv[2])
want = {}
for arg in sys.argv[3:]:
    key, ratio = arg.split("=")
    problem, mode = key.split(":")
    want.setdefault(problem, {})[mode] = float(ratio)
rng = random.Random(rnd)
results = []
for problem, modes in want.items():
    k = json.load(open(os.path.join(run, problem, f"kforge-r{rnd}.json")))
    kmed = k["timing"]["programs"][0]["repetition_medians_ns"][0]
    spec = json.load(open(os.path.join(os.path.dirname(__file__), f"../../../../problems/{problem}.json")))
    policy = spec["precision"]["policy"]
    entry = {"spec": f"problems/{problem}.json", "problem": problem, "policy": policy,
             "settings": {"fp32_strict": policy == "fp32_strict",
                          "cuda.matmul.allow_tf32": policy == "tf32",
                          "cudnn.allow_tf32": policy == "tf32",
                          "float32_matmul_precision": "high" if policy == "tf32" else "highest"},
             "modes": {}}
    for mode, ratio in modes.items():
        samples = [kmed * ratio * (1 + 0.002 * (i - 50)) for i in range(101)]
        rng.shuffle(samples)
        clocks = [{"sm_clock_mhz": 1755 if i % 4 == 0 else 1980, "mem_clock_mhz": 3201,
                   "temperature_c": 50, "throttle_reasons": 4 if i % 4 == 0 else 0}
                  for i in range(101)]
        entry["modes"][mode] = {"status": "ok", "first_call_s": 1.0,
                                "max_abs_diff_vs_eager": 0.0, "samples_ns": samples,
                                "clocks": clocks, "stats": sample_stats(samples)}
    entry["stored"] = {"db": "/tmp/fake.db", "run_id": 1, "evaluation_id": 1, "candidate_id": 1}
    results.append(entry)
doc = {"tool": "kforge_py.baseline",
       "device": {"index": 0, "name": "FAKE (test data, not a measurement)", "uuid": "fake",
                  "driver": "none", "l2_bytes": 62914560, "sm_count": 132,
                  "compute_capability": "9.0"},
       "torch": "fake", "torch_cuda": "fake", "triton": None,
       "protocol": {"iters": 101, "warmup": 10, "l2_flush_bytes": 125829120,
                    "timer": "fake", "clocks": "fake", "seed": 1},
       "results": results}
print(json.dumps(doc))
