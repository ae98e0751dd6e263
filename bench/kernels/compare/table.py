#!/usr/bin/env python3
"""One Markdown table from bench/kernels/compare/run.sh outputs: per problem the kforge median
(hand-written problems/P.kf, full tier), PyTorch eager, torch.compile default and max-autotune
medians (each the median over the interleaved rounds of its per-round medians), speedups
(torch time / kforge time: > 1 means kforge is faster), % of calibrated copy bandwidth for
memory-bound problems (compulsory bytes from `kforge sol --json`), % of cuBLAS throughput for
plain GEMMs (cuBLAS = PyTorch eager matmul), the SM clocks both sides saw (NVML per sample),
and the issue-4 targets as met / missed.

usage: table.py RUN... [--calibration bench/calibration/h200.json]
  RUN  an $OUT folder of run.sh or its compare.tgz; with several, a problem's numbers come
       from the LAST run that timed it (a problem's A and B rounds are never mixed across runs)
"""
import argparse
import glob
import json
import os
import re
import statistics
import sys
import tarfile
import tempfile

GEMM_OPS = {"matmul", "linear", "bmm"}
ROW_OPS = {"sum", "mean", "max", "min", "softmax", "log_softmax", "logsumexp", "layer_norm",
           "rms_norm", "group_norm"}
CAPPED = 0x4 | 0x8 | 0x20 | 0x40 | 0x80  # NVML: power cap, HW slowdown, thermal, power brake
MODES = ("eager", "compile_default", "compile_max_autotune")
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../.."))


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def open_run(path, tmp):
    if os.path.isdir(path):
        return path
    if tarfile.is_tarfile(path):
        d = tempfile.mkdtemp(dir=tmp)
        with tarfile.open(path) as t:
            t.extractall(d, filter="data")
        return d
    sys.exit(f"table.py: {path} is neither a run folder nor a .tgz")


def spec_of(problem, cache={}):
    if problem not in cache:
        cache[problem] = load_json(os.path.join(ROOT, "problems", problem + ".json")) or {}
    return cache[problem]


def classify(problem):
    spec = spec_of(problem)
    ops = [g.get("op") for g in spec.get("graph", [])]
    policy = spec.get("precision", {}).get("policy", "?")
    if any(o in GEMM_OPS for o in ops):
        if policy == "fp32_strict":
            return "gemm_fp32_strict", policy
        if all(o in GEMM_OPS for o in ops) and len(ops) == 1:
            return ("gemm_plain" if policy in ("bf16", "fp16") else "gemm_plain_" + policy), policy
        return "gemm_fused", policy
    if any(o in ROW_OPS for o in ops):
        return "rowwise", policy
    return "elementwise", policy


def kforge_round(doc):
    """(median_ns or None, status, samples, simulated) of one `kforge eval --json` output."""
    if not isinstance(doc, dict):
        return None, "no output", [], False
    if "candidates" in doc:  # session format (--repeat / --interleave)
        rep = doc["candidates"][0]["report"] if doc.get("candidates") else {}
        t = doc.get("timing") or {}
        progs = t.get("programs") or []
        sim = bool(rep.get("simulated") or t.get("simulated"))
        if rep.get("status") != "passed":
            return None, f"{rep.get('status', '?')}: {rep.get('message', '')[:80]}", [], sim
        if not progs or progs[0].get("status") != "passed":
            msg = progs[0].get("message", "") if progs else t.get("message", "no timing")
            return None, f"timing: {msg[:80]}", [], sim
        p = progs[0]
        samples = [s for r in p.get("repetitions", []) for s in r.get("samples", [])]
        return statistics.median(p["repetition_medians_ns"]), "passed", samples, sim
    sim = bool(doc.get("simulated"))
    if doc.get("status") != "passed":
        return None, f"{doc.get('status', '?')}: {doc.get('message', '')[:80]}", [], sim
    return doc["timing"]["median_ns"], "passed", doc.get("samples", []), sim


def clock_text(samples):
    mhz = [s["sm_clock_mhz"] for s in samples if s.get("sm_clock_mhz")]
    if not mhz:
        return "-"
    capped = sum(1 for s in samples if int(s.get("throttle_reasons", 0)) & CAPPED)
    return (f"{statistics.median(mhz):.0f} ({min(mhz)}-{max(mhz)}) MHz, "
            f"capped {100 * capped / len(samples):.0f}%")


def read_run(d, data):
    """Adds this run's problems to data (later runs replace earlier ones per problem)."""
    meta = open(os.path.join(d, "meta.txt")).read() if os.path.exists(os.path.join(d, "meta.txt")) else ""
    simulated_run = "device: sim" in meta
    sol = {s["problem"]: s for s in (load_json(os.path.join(d, "sol.json")) or [])}
    base = {}  # problem -> mode -> [(round, median_ns|None, status, clocks)]
    host_clock = False
    for f in sorted(glob.glob(os.path.join(d, "baseline-*-r*.json"))):
        rnd = int(re.search(r"-r(\d+)\.json$", f).group(1))
        doc = load_json(f)
        if not isinstance(doc, dict) or "results" not in doc:
            continue
        dev = str(doc.get("device", {}).get("name", ""))
        host_clock |= "test only" in dev or "FAKE" in dev
        for res in doc["results"]:
            for mode, m in res.get("modes", {}).items():
                med = m.get("stats", {}).get("median_ns") if m.get("status") == "ok" else None
                st = m.get("status", "?") + (": " + m["message"][:60] if "message" in m else "")
                base.setdefault(res["problem"], {}).setdefault(mode, []).append(
                    (rnd, med, st, m.get("clocks", [])))
    for pdir in sorted(glob.glob(os.path.join(d, "*", "kforge-r*.json"))):
        problem = os.path.basename(os.path.dirname(pdir))
        entry = data.setdefault("_new", {}).setdefault(problem, {
            "run": d, "kforge": [], "base": base.get(problem, {}), "sol": sol.get(problem),
            "simulated": simulated_run or host_clock})
        rnd = int(re.search(r"-r(\d+)\.json$", pdir).group(1))
        med, st, samples, sim = kforge_round(load_json(pdir))
        entry["simulated"] |= sim
        entry["kforge"].append((rnd, med, st, samples))
    for problem, entry in data.pop("_new", {}).items():
        data[problem] = entry
    skipped = open(os.path.join(d, "skipped.txt")).read().strip() \
        if os.path.exists(os.path.join(d, "skipped.txt")) else ""
    steps = os.path.join(d, "steps.tsv")
    if os.path.exists(steps):
        rows = [line.rstrip("\n").split("\t") for line in open(steps)][1:]
        bad = [f"{r[1]} r{r[2]} [{r[3]}] rc={r[4]} wall {r[5]} s ({r[6]})"
               for r in rows if len(r) > 6 and r[4] != "0"]
        if bad:
            skipped = "\n".join(x for x in [skipped, "steps with rc != 0:"] + bad if x)
    return skipped


def med_rounds(rounds):
    ok = [m for _, m, _, _ in rounds if m is not None]
    return statistics.median(ok) if ok else None


def fmt_us(ns):
    return f"{ns / 1e3:.1f}" if ns else "-"


def ratio(torch_ns, k_ns):
    return f"{torch_ns / k_ns:.2f}x" if torch_ns and k_ns else "-"


def target(cls, k, eager, comp, mat, pct_bw, compute_bound=False):
    """(target text, verdict) of the issue-4 target for this class of problem. A row-wise or
    element-wise problem that `kforge sol` calls compute-bound (mish's transcendental chain) has no
    copy-bandwidth target: it is judged against torch.compile alone, its % of SOL shown."""
    if cls == "gemm_plain":
        if not (k and eager):
            return ">= 95% of cuBLAS", "not measured"
        return ">= 95% of cuBLAS", "met" if eager / k >= 0.95 else "missed"
    if cls == "gemm_fused":
        if not (k and mat):
            return ">= max-autotune", "not measured"
        return ">= max-autotune", "met" if mat / k >= 1.0 else "missed"
    if cls == "gemm_fp32_strict":
        if not (k and eager):
            return ">= 2x PyTorch fp32", "not measured"
        return ">= 2x PyTorch fp32", "met" if eager / k >= 2.0 else "missed"
    if cls in ("rowwise", "elementwise"):
        info = " (row-wise rule, info)" if cls == "elementwise" else ""
        if compute_bound:
            name = ">= 1.0x compile (compute-bound)" + info
            if not (k and comp):
                return name, "not measured"
            return name, "met" if comp / k >= 1.0 else "missed (vs compile)"
        name = ">= 85% copy BW, >= 1.0x compile" + info
        if not (k and comp and pct_bw is not None):
            return name, "not measured"
        bw_ok, comp_ok = pct_bw >= 85, comp / k >= 1.0
        if bw_ok and comp_ok:
            return name, "met"
        why = [w for w, ok in (("BW", bw_ok), ("vs compile", comp_ok)) if not ok]
        return name, "missed (" + ", ".join(why) + ")"
    return "no issue-4 target", "-"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--calibration", default=os.path.join(ROOT, "bench/calibration/h200.json"))
    a = ap.parse_args(argv)
    cal = load_json(a.calibration)
    if not cal or "dram_bytes_per_s" not in cal:
        sys.exit(f"table.py: {a.calibration} has no dram_bytes_per_s")
    copy_bw = cal["dram_bytes_per_s"]
    data, skipped = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        for r in a.runs:
            s = read_run(open_run(r, tmp), data)
            if s:
                skipped.append(f"{r}:\n{s}")
    if not data:
        sys.exit("table.py: no kforge-r*.json in the given runs")
    any_sim = any(e["simulated"] for e in data.values())
    if any_sim:
        print("**SIMULATED: rows marked (sim) come from the simulated device and/or the host-clock "
              "test mode of the Python side; their numbers are NOT measurements.**\n")
    print("| problem | class | kforge (us) | eager (us) | compile (us) | max-autotune (us) | "
          "vs eager | vs compile | vs max-autotune | % copy BW / % cuBLAS | rounds k/e/c/m | "
          "SM clocks kforge | SM clocks torch | target | verdict |")
    print("|" + "---|" * 15)
    counts = {}
    for problem in sorted(data):
        e = data[problem]
        cls, policy = classify(problem)
        k = med_rounds(e["kforge"])
        b = {m: med_rounds(e["base"].get(m, [])) for m in MODES}
        comp = b["compile_default"] or b["compile_max_autotune"]
        sol = e["sol"] or {}
        pct_bw = None
        if k and sol.get("bound_kind") == "memory" and sol.get("bytes_fused"):
            pct_bw = 100 * sol["bytes_fused"] / (k * 1e-9) / copy_bw
        compute_bound = cls in ("rowwise", "elementwise") and sol.get("bound_kind") == "compute"
        if cls.startswith("gemm_plain"):
            util = f"{100 * b['eager'] / k:.0f}% cuBLAS" if k and b["eager"] else "-"
        elif pct_bw is not None:
            util = f"{pct_bw:.0f}% copy BW"
        elif compute_bound and k and sol.get("time_fused_s"):
            util = f"{100 * sol['time_fused_s'] / (k * 1e-9):.0f}% SOL (compute)"
        else:
            util = "-"
        nrounds = "/".join(str(sum(1 for x in rs if x[1] is not None)) for rs in
                           [e["kforge"]] + [e["base"].get(m, []) for m in MODES])
        tclocks = [c for m in MODES for _, _, _, cl in e["base"].get(m, []) for c in cl]
        kclocks = [s for _, _, _, ss in e["kforge"] for s in ss]
        tgt, verdict = target(cls, k, b["eager"], comp, b["compile_max_autotune"], pct_bw,
                              compute_bound)
        v = verdict.split(" (")[0]
        counts[v] = counts.get(v, 0) + 1
        name = problem + (" (sim)" if e["simulated"] else "")
        if e["simulated"] and verdict != "-":
            verdict += " (simulated)"
        print(f"| {name} | {cls} {policy} | {fmt_us(k)} | {fmt_us(b['eager'])} | "
              f"{fmt_us(b['compile_default'])} | {fmt_us(b['compile_max_autotune'])} | "
              f"{ratio(b['eager'], k)} | {ratio(b['compile_default'], k)} | "
              f"{ratio(b['compile_max_autotune'], k)} | {util} | {nrounds} | "
              f"{clock_text(kclocks)} | {clock_text(tclocks)} | {tgt} | {verdict} |")
    print()
    print("Targets: " + ", ".join(f"{v} {n}" for v, n in sorted(counts.items())) + ".")
    print(f"Speedups are torch time / kforge time (> 1: kforge faster). Times: medians over "
          f"interleaved rounds (A = kforge eval --tier full, B = kforge baseline) of each round's "
          f"median of ITERS (default 100) cold-L2 iterations (CUDA events). eager of a plain GEMM = cuBLAS. "
          f"% copy BW: compulsory bytes (kforge sol) / time / {copy_bw / 1e12:.2f} TB/s "
          f"(% SOL (compute): kforge sol's fused-time bound / time, for row-wise and "
          f"element-wise problems it calls compute-bound) "
          f"(calibrated copy). rounds k/e/c/m: rounds with a passed/ok median for kforge, "
          f"eager, compile default, max-autotune. Clocks: median (min-max) SM MHz over every "
          f"timed sample, capped = share of samples with a power/thermal throttle reason. "
          f"compile in the row-wise rule = compile default (max-autotune when default is "
          f"missing).")
    failures = [(p, r, st) for p, e in sorted(data.items())
                for r, m, st, _ in e["kforge"] if m is None]
    failures += [(p, f"{mode} r{r}", st) for p, e in sorted(data.items())
                 for mode, rs in e["base"].items() for r, m, st, _ in rs if m is None]
    if failures:
        print("\nNot timed:")
        for p, r, st in failures:
            print(f"- {p} {'r' + str(r) if isinstance(r, int) else r}: {st}")
    if skipped:
        print("\nSkipped by the time guard, or failed (steps.tsv):\n```\n" + "\n".join(skipped) + "\n```")
    return 0


if __name__ == "__main__":
    sys.exit(main())
