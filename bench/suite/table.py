#!/usr/bin/env python3
"""Joins kforge quick-tier evaluations (jsonl from bench/gpu_run.sh), PyTorch eager baselines
(jsonl from bench/suite/torch_eager.py) and `kforge sol --json` into one Markdown table.
The two timings come from separate phases of one device session (not interleaved): indicative
ratios, not the interleaved protocol of issue 5.

usage: table.py --sol SOL.json --eager EAGER.jsonl QUICK.jsonl...   (later files win per problem)
"""
import argparse
import json

ap = argparse.ArgumentParser()
ap.add_argument("--sol", required=True)
ap.add_argument("--eager", required=True)
ap.add_argument("quick", nargs="+")
a = ap.parse_args()
sol = {s["problem"]: s for s in json.load(open(a.sol))}
eager = {j["problem"]: j for j in map(json.loads, open(a.eager)) if "eager_median_us" in j}
quick = {}
for f in a.quick:
    for line in open(f):
        j = json.loads(line)
        quick[j.get("problem_file")] = j
print("| problem | policy | kforge quick (us) | eager (us) | eager / kforge | fused SOL (us) | % of SOL |")
print("|---|---|---|---|---|---|---|")
for name in sorted(set(quick) | set(eager)):
    q, e, s = quick.get(name, {}), eager.get(name, {}), sol.get(name, {})
    t = q.get("timing", {}).get("median_ns")
    k = f"{t / 1e3:.1f}" if t and q.get("status") == "passed" else q.get("status", "-")
    eu = e.get("eager_median_us")
    ratio = f"{eu / (t / 1e3):.2f}x" if t and eu and q.get("status") == "passed" else "-"
    ts = s.get("time_fused_s")
    pct = f"{100 * ts * 1e9 / t:.0f}%" if ts and t and q.get("status") == "passed" else "-"
    print(f"| {name} | {s.get('policy', '?')} | {k} | {eu:.1f} | {ratio} | "
          f"{ts * 1e6:.1f} | {pct} |" if eu and ts else f"| {name} | | {k} | - | - | - | - |")
