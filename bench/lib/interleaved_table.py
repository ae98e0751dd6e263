"""One line per program of a `kforge eval --tier full --interleave --json` report: problem,
plan (the program file's middle name: NAME.PLAN.kf), status, full-tier median, interleaved
median, GB/s (the evaluator's bytes over the interleaved median) and, with --base PLAN, the
interleaved ratio base/this. Exit 1 when there is no report or a program did not pass.

usage: python3 interleaved_table.py REPORT.json PROBLEM RC [--base PLAN]
(bench/lib/plan_pair.sh, bench/kernels/scan/run.sh)"""
import json
import sys


def main(argv):
    path, prob, rc = argv[1], argv[2], argv[3]
    base = argv[5] if len(argv) > 5 and argv[4] == "--base" else None
    try:
        d = json.load(open(path))
        cands = d["candidates"]
    except (OSError, ValueError, KeyError):
        print(f"{prob}: no report (rc={rc})")
        return 1
    inter = {}
    for p in (d.get("timing") or {}).get("programs", []):
        reps = p.get("repetitions") or []
        if reps:
            inter[p.get("program_hash")] = reps[0]["stats"]["median_ns"]
    rows, ok = [], True
    for c in cands:
        r = c.get("report", {})
        rows.append((c["label"].split(".")[-2], r.get("status", "?"),
                     r.get("timing", {}).get("median_ns"), inter.get(r.get("program_hash")),
                     r.get("bytes"), r.get("simulated", False),
                     r.get("message", "").replace("\n", " ")[:120]))
        ok &= r.get("status") == "passed"
    ref = next((row for row in rows if row[0] == base), None)
    for plan, status, full, il, nbytes, sim, msg in rows:
        us = lambda t: f"{t / 1e3:9.1f}" if t else "        -"
        gbs = f"{nbytes / il:6.0f} GB/s" if nbytes and il else "    -     "
        ratio = ""
        if base:
            ratio = f"  {base}/this " + (f"{ref[3] / il:5.2f}x" if ref and ref[3] and il else "  -  ")
        print(f"{prob:26s} {plan:6s} {status:8s} full {us(full)} us  interleaved {us(il)} us "
              f"{gbs}{ratio}{' SIMULATED' if sim else ''} {msg if status != 'passed' else ''}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
