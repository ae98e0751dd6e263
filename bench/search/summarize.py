#!/usr/bin/env python3
"""Summary of the search benchmark (bench/search/run.sh) from its kforge stores.

usage: python3 bench/search/summarize.py [--budget S] [--calibration FILE] [--out-dir DIR]
                                         [--kforge BIN] STORE_OR_FOLDER_OR_TARBALL...

Reads every `kforge optimize` run in the stores (sqlite3, schema in store/schema.cpp) and the
PyTorch baselines (`kforge baseline` runs, labels of report/baseline.h) in any of them, and
prints a Markdown report: per problem the start and best time, % of fused SOL (`kforge sol
--json --calibration`), speedups, time to 95% of the final best, which proposer made the best
and its lineage, progress curves of every mode (built-in, random, parameter-only), geomeans and
the issue's targets as met/missed. With --out-dir, also curves.csv, summary.md and, per problem,
a folder of `kforge report --compare` (the curves as SVG, compare.json, compare.html) there.

Definitions (the same as `kforge report`, report/model.h, where they overlap):
  ranked evaluation  `passed`, holds "candidate" samples, at the highest timed tier the run has
                     (full/profile over quick); candidates with any `incorrect`/`flagged_gaming`
                     evaluation and baseline carriers are never ranked.
  time               median of the evaluation's "candidate" samples.
  GPU-seconds        cumulative sum of every measured sample and the compile gate's
                     time_compile_ns; evaluations served from the cache cost 0.
  wall               seconds from the run's start (runs.started_at) to the evaluation's row.
  search time        wall since the start program's first timing: the --budget-wall does not
                     count the start program's evaluation, which comes before the search.
  t95                search time at which the best first came within 95% of the final best's
                     speed (best <= final / 0.95), as a fraction of the budget; "t95 gain" is the
                     same for 95% of the final gain over the start program (log scale).
  beats random       built-in reaches random's final best in at most half the search time random
                     needed; where random never improved on the start, built-in must end faster;
                     where neither improved, the problem is left out (a tie) and named. Issue 6
                     asks for this "on 3 of those problems": met at 3 wins, the losses named.
Simulated runs (device uuid "simulated-...") are the analytic model's times: they are marked,
never compared with PyTorch baselines, and targets are not checked on them.
"""
import argparse
import json
import math
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plots import MODE_TEXT, compare_curves, points_table  # noqa: E402
from search_data import (label, load_store, analyse, same_device, start_kind, stop_text, t95,  # noqa: E402
                         time_to_reach)

MODES = ("builtin", "random", "param")
BASELINES = ("eager", "compile_max_autotune")


def sol_time_s(kforge, spec_json, datasheet_key, calibration, cache, simulated):
    """Fused SOL time (s) and its ceilings' source. The calibration (a measured card) is used for
    GPU runs on the card it was measured on; the simulated device models the datasheet."""
    key = (spec_json, datasheet_key, simulated)
    if key in cache:
        return cache[key]
    cache[key] = (None, "kforge not found")
    if not kforge:
        return cache[key]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        f.write(spec_json)
    cmd = [kforge, "sol", f.name, "--json", "--gpu-model", datasheet_key or "h200"]
    use_cal = (calibration and os.path.exists(calibration) and datasheet_key == "h200"
               and not simulated)
    if use_cal:
        cmd += ["--calibration", calibration]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        if p.returncode == 0:
            cache[key] = (json.loads(p.stdout)[0]["time_fused_s"],
                          "calibrated" if use_cal else "datasheet")
        else:
            cache[key] = (None, p.stderr.strip()[-200:])
    except (OSError, subprocess.SubprocessError, ValueError, KeyError, IndexError) as e:
        cache[key] = (None, str(e))
    finally:
        os.unlink(f.name)
    return cache[key]


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def fmt_us(ns):
    return f"{ns / 1e3:.1f}" if ns else "-"


def fmt_x(x):
    return f"{x:.2f}x" if x else "-"


def collect_inputs(paths, tmp):
    """Store files from files, folders (searched recursively) and .tar.gz archives."""
    dbs = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, files in os.walk(p):
                dbs += [os.path.join(root, f) for f in sorted(files) if f.endswith(".db")]
        elif p.endswith((".tar.gz", ".tgz", ".tar")):
            d = tempfile.mkdtemp(dir=tmp)
            with tarfile.open(p) as t:
                t.extractall(d, filter="data")
            dbs += collect_inputs([d], tmp)
        elif os.path.isfile(p):
            dbs.append(p)
        else:
            sys.exit(f"summarize.py: {p}: no such store, folder or archive")
    return dbs


def manifest_of(db):
    """run.sh's manifest beside a store: {(problem, mode): entry} for that store."""
    path = os.path.join(os.path.dirname(db), "manifest.jsonl")
    out = {}
    if os.path.exists(path):
        for line in open(path):
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("db") == os.path.basename(db):
                out[(e["problem"], e["mode"])] = e
    return out


def target_row(name, value, ok, simulated, have):
    if not have:
        res = "no data"
    elif simulated:
        res = "not checked (simulated device)"
    else:
        res = "**met**" if ok else "**missed**"
    return f"| target: {name} | {value} | {res} |"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="+", help="stores, folders of them, or run.sh tarballs")
    ap.add_argument("--budget", type=float, default=None,
                    help="wall budget of a run, s (default: run.sh's manifest, else 120)")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--calibration",
                    default=os.path.join(here, "..", "calibration", "h200.json"))
    ap.add_argument("--kforge", default=os.environ.get("KFORGE") or shutil.which("kforge"))
    ap.add_argument("--out-dir",
                    help="also write summary.md, curves.csv and the curves (SVG) here")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="kforge-summarize-")
    try:
        report = build(a, collect_inputs(a.inputs, tmp), tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(report)


def build(a, dbs, tmp):
    if not dbs:
        sys.exit("summarize.py: no stores (.db) found in the inputs")
    runs, baselines, notes = [], [], []
    for db in dbs:
        try:
            r, b = load_store(db, tmp)
        except (sqlite3.Error, KeyError, ValueError) as e:
            print(f"summarize.py: {db}: skipped, not a readable kforge store ({e})",
                  file=sys.stderr)
            notes.append(f"{label(db)}: skipped, not a readable kforge store ({e})")
            continue
        man = manifest_of(db)
        for run in r:
            entry = man.get((run["problem"], run["mode"]), {})
            run["budget"] = a.budget or float(entry.get("budget_s") or 120)
            run["manifest"] = entry
        runs += r
        copies = sorted({x["problem"] for x in b if x["input_copies"]})
        if copies:
            notes.append(f"{label(db)}: max-autotune baselines of {', '.join(copies)} left out: "
                         "timed with CUDA-graph input copies (kforge baseline before 463727a)")
        baselines += [x for x in b if not x["input_copies"]]
    # The latest run of each (problem, mode); a GPU run wins over a simulated one.
    latest = {}
    for run in sorted(runs, key=lambda r: (not r["simulated"], r["started_at"])):
        key = (run["problem"], run["mode"])
        if key in latest:
            notes.append(f"{run['problem']} {run['mode']}: {label(latest[key]['db'])} run "
                         f"{latest[key]['run_id']} superseded by {label(run['db'])} run "
                         f"{run['run_id']}")
        latest[key] = run
    res = {k: analyse(v) for k, v in latest.items()}
    problems = sorted({p for p, _ in res})
    simulated = any(r["simulated"] for r in res.values())
    sol_cache = {}
    md = ["# Search benchmark summary", ""]
    if simulated:
        md += ["> **SIMULATED DEVICE.** Runs marked (sim) ran on kforge's simulated device: their "
               "times come from an analytic model, not from measurements on a GPU. They test the "
               "benchmark's plumbing only; no target is checked on them and no PyTorch baseline "
               "is compared with them.", ""]
    md += [f"Stores: {', '.join(label(d) for d in dbs)}; "
           f"{len(runs)} optimize runs, {len(baselines)} baseline samples. Times are medians "
           "of the best's 'candidate' samples at the run's highest timed tier.", ""]
    # ---- main table (built-in proposers)
    md += ["## Built-in proposers (diagnosis, parameter)", "",
           "| problem | device | start (us) | best (us) | % fused SOL | vs start | vs eager | "
           "vs max-autotune | t95 / budget | t95 gain / budget | best made by | run |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    rows = {}
    for p in problems:
        r = res.get((p, "builtin"))
        if not r:
            md.append(f"| {p} | - | no built-in run | | | | | | | | | |")
            continue
        sol_s, sol_src = sol_time_s(a.kforge, r["spec_json"], r["datasheet_key"],
                                    a.calibration, sol_cache, r["simulated"])
        pct = 100 * sol_s * 1e9 / r["best_ns"] if (sol_s and r["best_ns"]) else None
        vs_start = r["start_ns"] / r["best_ns"] if (r["start_ns"] and r["best_ns"]) else None
        base = {}
        if not r["simulated"] and r["best_ns"]:
            for name in BASELINES:
                t = [b["time_ns"] for b in baselines if b["name"] == name and b["problem"] == p
                     and same_device(b["device"], r["device"]) and b["shapes"] == r["shapes"]
                     and not b["simulated"]]
                if t:
                    base[name] = statistics.median(t) / r["best_ns"]
        f95, g95 = t95(r, r["budget"])
        rows[p] = dict(pct=pct, vs_start=vs_start, base=base, t95=f95, t95g=g95, r=r)
        sim = " (sim)" if r["simulated"] else ""
        na = "n/a (sim)" if r["simulated"] else "-"
        status = ("cut (killed at the cap)" if r["cut"] else r["status"]) + \
            f", {r['evaluations']} evals"
        md.append(
            f"| {p} | {r['device']}{sim} | {fmt_us(r['start_ns'])} | {fmt_us(r['best_ns'])} | "
            f"{f'{pct:.0f}%' if pct else '-'}{'' if sol_src in ('calibrated', None) else ' (' + sol_src[:40] + ')'} | "
            f"{fmt_x(vs_start)} | {fmt_x(base.get('eager')) if base.get('eager') else na} | "
            f"{fmt_x(base.get('compile_max_autotune')) if base.get('compile_max_autotune') else na} | "
            f"{f'{f95:.2f}' if f95 is not None else '-'} | {f'{g95:.2f}' if g95 is not None else '-'} | "
            f"{r.get('best_proposer', '-').replace('search:', '')} | {label(r['db'])}#{r['run_id']} {status} |")
    md.append("")
    # ---- modes compared
    md += ["## Modes at equal budget", "",
           "| problem | mode | start eval (s) | start (us) | best (us) | vs start | t95 / budget | "
           "search s to final | built-in's search s to this final | run | stopped |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    beats, ties = {}, []
    for p in problems:
        b = res.get((p, "builtin"))
        for m in MODES:
            r = res.get((p, m))
            if not r:
                continue
            vs = r["start_ns"] / r["best_ns"] if (r["start_ns"] and r["best_ns"]) else None
            f95, _ = t95(r, r["budget"])
            t_own = time_to_reach(r, r["best_ns"]) if r["best_ns"] else None
            t_b = time_to_reach(b, r["best_ns"]) if (b and r["best_ns"]) else None
            if m == "random" and b and b["best_ns"] and t_own is not None:
                if r["start_ns"] and r["best_ns"] >= r["start_ns"]:
                    # Random never improved on the start: built-in beats it by being faster.
                    if b["best_ns"] < r["best_ns"]:
                        beats[p] = True
                    else:
                        ties.append(p)
                else:
                    beats[p] = t_b is not None and t_b <= 0.5 * t_own
            md.append(f"| {p} | {MODE_TEXT[m]}{' (sim)' if r['simulated'] else ''}, "
                      f"{start_kind(r)} start | "
                      f"{r['start_eval_s']:.1f} | {fmt_us(r['start_ns'])} | {fmt_us(r['best_ns'])} | {fmt_x(vs)} | "
                      f"{f'{f95:.2f}' if f95 is not None else '-'} | "
                      f"{f'{t_own:.1f}' if t_own is not None else '-'} | "
                      f"{f'{t_b:.1f}' if t_b is not None else ('never' if b else '-')} | "
                      f"{label(r['db'])}#{r['run_id']}{' cut' if r['cut'] else ''} | "
                      f"{stop_text(r)} |")
    md.append("")
    # ---- lineage and credit
    md += ["## What produced the best (built-in runs)", "",
           "Lineage nearest first; credit = share of the log speedup over the start program won "
           "by each proposer's improvements of the running best.", ""]
    for p in problems:
        r = res.get((p, "builtin"))
        if not r or not r.get("lineage"):
            continue
        total = sum(r["credit"].values())
        credit = ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in
                           sorted(r["credit"].items(), key=lambda kv: -kv[1])) if total > 0 \
            else "no improvement over the start"
        md.append(f"- **{p}**: credit {credit}; lineage: " + " <- ".join(r["lineage"]))
    md.append("")
    # ---- geomeans and targets
    have = [v for v in rows.values() if v["r"]["best_ns"]]
    real = [v for v in have if not v["r"]["simulated"]]
    judged = real if real else have
    sim_only = not real
    # A problem whose built-in run found no correct program counts as 0% of SOL.
    failed = [v for v in rows.values() if not v["r"]["best_ns"]
              and (not v["r"]["simulated"] or sim_only)]
    pcts = [v["pct"] for v in judged if v["pct"]] + [0.0] * len(failed)
    g_start = geomean([v["vs_start"] for v in judged])
    g_eager = geomean([v["base"].get("eager") for v in judged])
    g_mat = geomean([v["base"].get("compile_max_autotune") for v in judged])
    n_mat = sum(1 for v in judged if v["base"].get("compile_max_autotune"))
    t95s = [v["t95"] for v in judged if v["t95"] is not None]
    md += ["## Geomeans and the issue's targets", "",
           "| | value | result |", "|---|---|---|",
           f"| geomean speedup vs start program | {fmt_x(g_start)} ({len(judged)} problems) | |",
           f"| geomean speedup vs PyTorch eager | {fmt_x(g_eager)} | |",
           target_row("median >= 75% of fused SOL",
                      f"{statistics.median(pcts):.0f}% ({len(pcts)} problems"
                      f"{f', {len(failed)} without a correct program at 0%' if failed else ''})"
                      if pcts else "-",
                      pcts and statistics.median(pcts) >= 75, sim_only, bool(pcts)),
           target_row("geomean >= 1.1x over torch.compile max-autotune",
                      f"{fmt_x(g_mat)} ({n_mat} problems)", g_mat and g_mat >= 1.1, sim_only,
                      g_mat is not None),
           target_row("95% of final within 40% of budget (every problem)",
                      f"{sum(1 for t in t95s if t <= 0.4)}/{len(t95s)} problems, median "
                      f"{statistics.median(t95s):.2f}" if t95s else "-",
                      t95s and all(t <= 0.4 for t in t95s), sim_only, bool(t95s)),
           target_row("beats random on 3 problems: random's final in <= half its time",
                      f"{sum(beats.values())}/{len(beats)} problems"
                      + (f"; lost: {', '.join(p for p, won in beats.items() if not won)}"
                         if not all(beats.values()) else "")
                      + (f" ({len(ties)} left out: neither improved on the start: "
                         f"{', '.join(ties)})" if ties else ""),
                      sum(beats.values()) >= 3,
                      sim_only, bool(beats)),
           ""]
    if real and len(real) < len(have):
        md.append("Targets are judged on the GPU runs only; simulated runs are left out.\n")
    # ---- curves
    csv = ["problem,mode,simulated,db,run,evaluation,wall_s,search_s,gpu_s,best_ns,"
           "speedup_vs_start"]
    md += ["## Progress curves", "",
           "Best speedup over the start program vs search wall seconds (from the run's first "
           "timing) and vs cumulative GPU-seconds (timed samples and compiler time), one curve "
           "per mode, drawn by `kforge report --compare` (its compare-wall.svg and "
           "compare-gpu.svg per problem with --out-dir). Each table row is a point of a step "
           "curve: an improvement of the best, then the run's last evaluation; the best holds "
           "from a row to the next. curves.csv holds every evaluation.", ""]
    for p in problems:
        runs, modes, sim, budget = [], [], False, None
        for m in MODES:
            r = res.get((p, m))
            if not r or not r["start_ns"]:
                continue
            sim, budget = sim or r["simulated"], budget or r["budget"]
            runs.append((r["copy"], r["run_id"]))
            modes.append(m)
            for c in r["curve"]:
                csv.append(f"{p},{m},{int(r['simulated'])},{label(r['db'])},"
                           f"{r['run_id']},{c['eval_id']},{c['wall_s']:.3f},{c['search_s']:.3f},{c['gpu_s']:.6f},"
                           f"{c['best_ns']:.1f},{r['start_ns'] / c['best_ns']:.4f}")
        if not runs:
            continue
        md += [f"### {p}{' (SIMULATED)' if sim else ''}", ""]
        out = os.path.join(a.out_dir, p) if a.out_dir else None
        compare, why = compare_curves(a.kforge, runs, out)
        if compare is None:
            md += [f"No curves: {why}", ""]
            print(f"summarize.py: {p}: {why}", file=sys.stderr)
            continue
        md += [points_table(compare, modes, budget), ""]
        if out:
            md += [f"![{p} against search wall seconds]({p}/compare-wall.svg)", "",
                   f"![{p} against GPU-seconds]({p}/compare-gpu.svg)", ""]
    skipped = []
    for d in sorted({os.path.dirname(db) for db in dbs}):
        path = os.path.join(d, "manifest.jsonl")
        for line in open(path) if os.path.exists(path) else []:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("status") in ("skipped", "failed", "killed"):
                skipped.append(f"{e.get('problem')} {e.get('mode')}: {e.get('status')} "
                               f"(rc {e.get('rc')}, {e.get('wall_s')} s) {e.get('message', '')}")
    if skipped:
        md += ["## Runs skipped, failed or killed (run.sh manifests)", ""] + \
            [f"- {x}" for x in skipped] + [""]
    if notes:
        md += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    text = "\n".join(md)
    if a.out_dir:
        os.makedirs(a.out_dir, exist_ok=True)
        open(os.path.join(a.out_dir, "curves.csv"), "w").write("\n".join(csv) + "\n")
        open(os.path.join(a.out_dir, "summary.md"), "w").write(text + "\n")
    return text


if __name__ == "__main__":
    main()
