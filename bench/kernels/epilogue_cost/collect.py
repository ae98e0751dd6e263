#!/usr/bin/env python3
"""Rows and table of bench/kernels/epilogue_cost/run.sh.

    collect.py row REPORT.json STDERR.txt ROWS.jsonl PROBLEM VARIANT ROUND RC WALL_S KERNELS
        appends one evaluation (status, median, clocks) to ROWS.jsonl
    collect.py table ROWS.jsonl TABLE.md DEVICE ROUNDS [SKIPPED...]
        writes the fused-vs-plain table; prints its summary lines

Per problem and variant (fused: the suite's program, plain: its make_plain.py twin), the time is
the median over rounds of each round's median (the full-tier protocol's median of 100 timed
launches); ratio = fused / plain; verdict `met` when ratio <= 1.05 (issue 4), `not met` above.
A fused program of several kernels is compared with its first GEMM alone, so its ratio is the
whole program over that GEMM, not an epilogue cost: verdict `n/a`.
"""
import json
import statistics
import sys

TARGET = 1.05


def clocks(j):
    """(median SM MHz, min, max, median memory MHz, OR of throttle reasons) of the samples."""
    s = [x for x in j.get("samples") or [] if isinstance(x, dict)]
    sm = [x["sm_clock_mhz"] for x in s if x.get("sm_clock_mhz")]
    mem = [x["mem_clock_mhz"] for x in s if x.get("mem_clock_mhz")]
    thr = 0
    for x in s:
        thr |= int(x.get("throttle_reasons") or 0)
    if not sm:
        return None
    return {"sm_med": statistics.median(sm), "sm_min": min(sm), "sm_max": max(sm),
            "mem_med": statistics.median(mem) if mem else None, "throttle": thr}


def row(argv):
    report, err, jsonl, prob, variant, rnd, rc, wall, kernels = argv
    r = {"problem": prob, "variant": variant, "round": int(rnd), "rc": int(rc),
         "wall_s": float(wall), "kernels": int(kernels)}
    try:
        j = json.load(open(report))
    except (OSError, ValueError):
        try:
            e = open(err).read().strip().splitlines()
        except OSError:
            e = []
        r.update(status="no_report", message=e[-1][:300] if e else "(no stderr)")
    else:
        t = j.get("timing") or {}
        r.update(status=j.get("status"), median_ns=t.get("median_ns"), iqr_ns=t.get("iqr_ns"),
                 message=(j.get("message") or "").replace("\n", " ")[:300],
                 simulated=bool(j.get("simulated")), clocks=clocks(j),
                 device=(j.get("device") or {}).get("name"))
    with open(jsonl, "a") as f:
        f.write(json.dumps(r) + "\n")


def fmt_us(ns):
    return "%.1f" % (ns / 1e3) if ns else "-"


def fmt_clk(rows):
    c = [r["clocks"] for r in rows if r.get("clocks")]
    if not c:
        return "-"
    lo, hi = min(x["sm_min"] for x in c), max(x["sm_max"] for x in c)
    thr = 0
    for x in c:
        thr |= x["throttle"]
    s = "%d" % statistics.median(x["sm_med"] for x in c)
    if lo != hi:
        s += " (%d-%d)" % (lo, hi)
    return s + (" thr=0x%x" % thr if thr else "")


def table(argv):
    jsonl, out, device, rounds = argv[:4]
    skipped = argv[4:]
    rows = []
    try:
        rows = [json.loads(l) for l in open(jsonl) if l.strip()]
    except OSError:
        pass
    sim = device == "sim" or any(r.get("simulated") for r in rows)
    mark = " SIMULATED" if sim else ""
    probs = []
    for r in rows:
        if r["problem"] not in probs:
            probs.append(r["problem"])
    lines = ["# Epilogue cost: fused GEMM vs the same GEMM with a plain store" +
             (" (SIMULATED device: times are the analytic model's, not measurements)"
              if sim else ""), "",
             "Target (issue 4): fused <= 1.05 x plain. Times: median over rounds of each "
             "round's full-tier median (us); rounds requested: %s; per-round values in "
             "brackets. Clocks: SM MHz median (range) over all timed samples of both variants, "
             "thr = OR of NVML throttle reasons." % rounds, "",
             "| problem | kernels | fused us [rounds] | plain us [rounds] | fused/plain | verdict "
             "| SM MHz fused | SM MHz plain | note |",
             "|---|---|---|---|---|---|---|---|---|"]
    summary = []
    counts = {"met": 0, "not met": 0, "n/a": 0, "failed": 0}
    for p in probs:
        pr = [r for r in rows if r["problem"] == p]
        by = {v: [r for r in pr if r["variant"] == v] for v in ("fused", "plain")}
        kernels = max(r["kernels"] for r in pr)
        med, per, bad = {}, {}, []
        for v, rs in by.items():
            ok = [r for r in rs if r.get("status") == "passed" and r.get("median_ns")]
            bad += ["%s r%d: %s %s" % (v, r["round"], r.get("status"), r.get("message", ""))
                    for r in rs if r not in ok]
            per[v] = "[" + " ".join(fmt_us(r["median_ns"]) for r in ok) + "]" if ok else ""
            med[v] = statistics.median(r["median_ns"] for r in ok) if ok else None
        if med["fused"] and med["plain"]:
            ratio = med["fused"] / med["plain"]
            rs = "%.3f" % ratio
            if kernels > 1:
                verdict = "n/a"
                note = "%d kernels: whole program vs its first GEMM alone" % kernels
            else:
                verdict = "met" if ratio <= TARGET else "not met"
                note = ""
        else:
            rs, verdict, note = "-", "failed", ""
        counts[verdict] += 1
        if bad:
            note = (note + "; " if note else "") + "; ".join(bad)[:400]
        lines.append("| %s | %d | %s %s | %s %s | %s | %s%s | %s | %s | %s |" % (
            p, kernels, fmt_us(med["fused"]), per["fused"], fmt_us(med["plain"]), per["plain"],
            rs, verdict, mark, fmt_clk(by["fused"]), fmt_clk(by["plain"]),
            note.replace("|", "/")))
        summary.append("%s fused_us=%s plain_us=%s ratio=%s verdict=%s%s" % (
            p, fmt_us(med["fused"]), fmt_us(med["plain"]), rs, verdict, mark))
    lines.append("")
    tail = ("met %(met)d, not met %(not met)d, n/a (multi-kernel) %(n/a)d, failed %(failed)d"
            % counts) + mark
    lines.append(tail)
    if skipped:
        lines.append("")
        lines.append("Skipped by the time guard (TOTAL_S): " + ", ".join(skipped))
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(summary + [tail] + (["skipped: " + " ".join(skipped)] if skipped else [])))


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "row" and len(sys.argv) == 11:
        row(sys.argv[2:])
    elif len(sys.argv) >= 6 and sys.argv[1] == "table":
        table(sys.argv[2:])
    else:
        sys.exit(__doc__)
