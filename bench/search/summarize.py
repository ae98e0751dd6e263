#!/usr/bin/env python3
"""Summary of the search benchmark (bench/search/run.sh) from its kforge stores.

usage: python3 bench/search/summarize.py [--budget S] [--calibration FILE] [--out-dir DIR]
                                         [--kforge BIN] STORE_OR_FOLDER_OR_TARBALL...

Reads every `kforge optimize` run in the stores (sqlite3, schema in store/schema.cpp) and the
PyTorch baselines (`kforge baseline` runs, labels of report/baseline.h) in any of them, and
prints a Markdown report: per problem the start and best time, % of fused SOL (`kforge sol
--json --calibration`), speedups, time to 95% of the final best, which proposer made the best
and its lineage, progress curves of every mode (built-in, random, parameter-only), geomeans and
the issue's targets as met/missed. With --out-dir, also curves.csv, one SVG per problem and
summary.md there.

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
                     where neither improved, the problem is left out (a tie) and named.
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
from datetime import datetime

MODES = ("builtin", "random", "param")
MODE_TEXT = {"builtin": "built-in (parameter,diagnosis)", "random": "random",
             "param": "parameter only"}
BASELINES = ("eager", "compile_max_autotune")


def parse_time(text):
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ") if "." in text else \
        datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")


def mode_of(proposers):
    if "random" in proposers:
        return "random"
    if "diagnosis" in proposers:
        return "builtin"
    if "parameter" in proposers:
        return "param"
    return "+".join(proposers) or "?"


def compile_ns(evidence):
    for g in evidence.get("gates", []) if isinstance(evidence, dict) else []:
        if g.get("gate") == "compile" and isinstance(g.get("evidence"), dict):
            t = g["evidence"].get("time_compile_ns")
            if isinstance(t, (int, float)):
                return float(t)
    return 0.0


def load_store(path):
    """Optimize runs and baseline samples of one store."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    devices = {r["id"]: dict(r) for r in con.execute("SELECT * FROM devices")}
    runs, baselines = [], []
    for r in con.execute("SELECT r.*, p.name AS problem, p.spec_json FROM runs r "
                         "JOIN problems p ON p.id = r.problem_id ORDER BY r.id"):
        opts = json.loads(r["options_json"] or "{}")
        dev = devices[r["device_id"]]
        evals = con.execute(
            "SELECT e.id, e.tier, e.status, e.shapes_key, e.evidence_json, e.created_at, "
            "e.cached_from_id, c.id AS cid, c.proposer, c.move FROM evaluations e "
            "JOIN candidates c ON c.id = e.candidate_id WHERE c.run_id = ? ORDER BY e.id",
            (r["id"],)).fetchall()
        samples = {}
        for m in con.execute(
                "SELECT m.evaluation_id, m.label, m.time_ns FROM measurements m JOIN evaluations e "
                "ON e.id = m.evaluation_id JOIN candidates c ON c.id = e.candidate_id "
                "WHERE c.run_id = ?", (r["id"],)):
            samples.setdefault(m["evaluation_id"], []).append((m["label"], m["time_ns"]))
        common = dict(db=path, run_id=r["id"], problem=r["problem"], spec_json=r["spec_json"],
                      device=dev["name"], datasheet_key=dev["datasheet_key"],
                      simulated=dev["uuid"].startswith("simulated"), status=r["status"],
                      started_at=r["started_at"])
        if opts.get("command") == "baseline":
            for e in evals:
                for label, t in samples.get(e["id"], []):
                    if label.startswith("baseline:"):
                        baselines.append(dict(common, name=label[len("baseline:"):],
                                              shapes=e["shapes_key"], time_ns=t))
            continue
        if opts.get("command") != "optimize":
            continue
        parents = {}
        for c in con.execute("SELECT cp.candidate_id, cp.parent_id FROM candidate_parents cp "
                             "JOIN candidates c ON c.id = cp.candidate_id WHERE c.run_id = ? "
                             "ORDER BY cp.position", (r["id"],)):
            parents.setdefault(c["candidate_id"], []).append(c["parent_id"])
        cands = {c["id"]: dict(c) for c in con.execute(
            "SELECT id, proposer, move FROM candidates WHERE run_id = ?", (r["id"],))}
        runs.append(dict(common, mode=mode_of(opts.get("proposers", [])),
                         proposers=opts.get("proposers", []), evals=[dict(e) for e in evals],
                         samples=samples, parents=parents, cands=cands))
    con.close()
    return runs, baselines


def analyse(run):
    """Best, start, curve and attribution of one optimize run."""
    bad = {e["cid"] for e in run["evals"] if e["status"] in ("incorrect", "flagged_gaming")}
    usable = [e for e in run["evals"] if e["cid"] not in bad
              and not e["proposer"].startswith("baseline")]

    def median(e):
        t = [x for label, x in run["samples"].get(e["id"], []) if label == "candidate"]
        return statistics.median(t) if t else None

    timed = [e for e in usable if e["status"] == "passed" and median(e) is not None]
    top = {"full", "profile"} if any(e["tier"] in ("full", "profile") for e in timed) else {"quick"}
    t0 = parse_time(run["started_at"])
    gpu_ns, best, best_eval, curve, improvements = 0.0, None, None, [], []
    start_ns = None
    for e in usable:
        if not e["cached_from_id"]:
            gpu_ns += sum(x for _, x in run["samples"].get(e["id"], []))
            gpu_ns += compile_ns(json.loads(e["evidence_json"] or "{}"))
        m = median(e) if (e["status"] == "passed" and e["tier"] in top) else None
        if m is not None and e["proposer"] == "start" and start_ns is None:
            start_ns = m
        if m is not None and (best is None or m < best):
            improvements.append((e["proposer"], best, m))
            best, best_eval = m, e
        wall = (parse_time(e["created_at"]) - t0).total_seconds()
        if best is not None:
            curve.append(dict(eval_id=e["id"], wall_s=wall, gpu_s=gpu_ns * 1e-9, best_ns=best))
    # Search time: from the start program's first timing (the budget does not count the start
    # program's evaluation, which comes before it).
    origin = curve[0]["wall_s"] if curve else 0.0
    for c in curve:
        c["search_s"] = max(0.0, c["wall_s"] - origin)
    out = dict(run, start_ns=start_ns, best_ns=best, curve=curve, start_eval_s=origin, tier="/".join(sorted(top)),
               cut=run["status"] == "running", shapes=best_eval["shapes_key"] if best_eval else None,
               evaluations=len(usable))
    if best_eval is None:
        return out
    # Lineage of the best: candidate, its first parent, ... (nearest first).
    chain, cid, seen = [], best_eval["cid"], set()
    while cid is not None and cid not in seen:
        seen.add(cid)
        c = run["cands"].get(cid, {"proposer": "?", "move": "?"})
        chain.append(f'{c["proposer"].replace("search:", "")}: {c["move"]}')
        ps = run["parents"].get(cid, [])
        cid = ps[0] if ps else None
    out["lineage"] = chain
    out["best_proposer"] = best_eval["proposer"]
    # Credit of each improvement (log speedup over the previous best) to its proposer.
    credit = {}
    for proposer, before, after in improvements:
        if before:
            name = proposer.replace("search:", "")
            credit[name] = credit.get(name, 0.0) + math.log(before / after)
    out["credit"] = credit
    return out


def label(db):
    """A store's name for the tables: its folder (run.sh's search-TAG) and file."""
    return os.path.join(os.path.basename(os.path.dirname(os.path.abspath(db))),
                        os.path.basename(db))


def same_device(a, b):
    return a.strip().lower() == b.strip().lower()


def stop_text(a):
    """Why the run ended, from run.sh's manifest (the optimize log's "stopped:" line)."""
    e = a.get("manifest") or {}
    if e.get("status") == "killed":
        return f"killed at the {e.get('cap_s')} s cap"
    msg = (e.get("message") or "").replace("stopped: ", "").replace("|", "/")
    return msg or ("cut" if a["cut"] else "?")


def t95(a, budget):
    """(t95 fraction, t95 gain fraction) of the budget; None without a curve."""
    if not a["curve"] or not a["best_ns"]:
        return None, None
    final = a["best_ns"]
    first = next(p for p in a["curve"] if p["best_ns"] <= final / 0.95)
    frac = first["search_s"] / budget
    gfrac = frac
    if a["start_ns"] and a["start_ns"] > final:
        need = 0.95 * math.log(a["start_ns"] / final)
        g = next(p for p in a["curve"] if math.log(a["start_ns"] / p["best_ns"]) >= need - 1e-12)
        gfrac = g["search_s"] / budget
    return frac, gfrac


def time_to_reach(a, target_ns):
    for p in a["curve"]:
        if p["best_ns"] <= target_ns * (1 + 1e-9):
            return p["search_s"]
    return None


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
    cmd = [kforge, "sol", f.name, "--json", "--device", datasheet_key or "h200"]
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


def ascii_plot(series, budget, width=64, height=14):
    """series: {mode: [(wall_s, speedup)]}; x = wall / budget, y = best speedup vs start."""
    pts = [p for s in series.values() for p in s]
    if not pts:
        return "(no points)"
    xmax = max(1.0, max(w for w, _ in pts) / budget)
    ylo, yhi = min(1.0, min(y for _, y in pts)), max(y for _, y in pts)
    yhi = yhi if yhi > ylo else ylo + 0.01
    grid = [[" "] * width for _ in range(height)]
    for mode, s in series.items():
        ch = {"builtin": "B", "random": "R", "param": "P"}.get(mode, "?")
        # step function: hold each best until the next point
        for i in range(width):
            x = i / (width - 1) * xmax * budget
            y = None
            for w, v in s:
                if w <= x:
                    y = v
            if y is not None:
                row = height - 1 - round((y - ylo) / (yhi - ylo) * (height - 1))
                cell = grid[row][i]
                grid[row][i] = ch if cell in (" ", ch) else "*"
    lines = [f"{yhi:7.3f}x |" + "".join(grid[0])]
    lines += ["         |" + "".join(r) for r in grid[1:-1]]
    lines += [f"{ylo:7.3f}x |" + "".join(grid[-1])]
    lines.append("         +" + "-" * width)
    lines.append(f"          0{' ' * (width - 12)}{xmax:.2f} x budget (search wall)")
    lines.append("          B built-in, R random, P parameter only, * overlap")
    return "\n".join(lines)


def svg_plot(title, series, budget, simulated):
    w, h, ml, mb = 520, 300, 50, 35
    pts = [p for s in series.values() for p in s]
    if not pts:
        return None
    xmax = max(1.0, max(x for x, _ in pts) / budget) * budget
    ylo, yhi = min(1.0, min(y for _, y in pts)), max(y for _, y in pts)
    yhi = yhi if yhi > ylo else ylo + 0.01
    sx = lambda x: ml + x / xmax * (w - ml - 10)
    sy = lambda y: h - mb - (y - ylo) / (yhi - ylo) * (h - mb - 25)
    colors = {"builtin": "#1f77b4", "random": "#d62728", "param": "#2ca02c"}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           'font-family="sans-serif" font-size="11">',
           f'<text x="{ml}" y="15">{title}{" (SIMULATED device)" if simulated else ""}</text>',
           f'<line x1="{ml}" y1="{h - mb}" x2="{w - 10}" y2="{h - mb}" stroke="black"/>',
           f'<line x1="{ml}" y1="{h - mb}" x2="{ml}" y2="20" stroke="black"/>',
           f'<text x="{ml}" y="{h - 8}">0</text>',
           f'<text x="{w - 170}" y="{h - 8}">{xmax:.0f} s search wall (budget {budget:.0f} s)</text>',
           f'<text x="2" y="{sy(yhi) + 4:.0f}">{yhi:.2f}x</text>',
           f'<text x="2" y="{sy(ylo) + 4:.0f}">{ylo:.2f}x</text>',
           f'<line x1="{sx(budget):.1f}" y1="20" x2="{sx(budget):.1f}" y2="{h - mb}" '
           'stroke="#999" stroke-dasharray="4"/>']
    for i, (mode, s) in enumerate(series.items()):
        path, last = [], None
        for x, y in s:
            if last is not None:
                path.append(f"{sx(x):.1f},{sy(last):.1f}")
            path.append(f"{sx(x):.1f},{sy(y):.1f}")
            last = y
        if last is not None:
            path.append(f"{sx(s[-1][0]):.1f},{sy(last):.1f}")
        c = colors.get(mode, "black")
        out.append(f'<polyline fill="none" stroke="{c}" stroke-width="2" points="{" ".join(path)}"/>')
        out.append(f'<text x="{w - 160}" y="{40 + 14 * i}" fill="{c}">{MODE_TEXT.get(mode, mode)}</text>')
    out.append("</svg>")
    return "\n".join(out)


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
    ap.add_argument("--out-dir", help="also write summary.md, curves.csv and SVGs here")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="kforge-summarize-")
    try:
        report = build(a, collect_inputs(a.inputs, tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(report)


def build(a, dbs):
    if not dbs:
        sys.exit("summarize.py: no stores (.db) found in the inputs")
    runs, baselines, notes = [], [], []
    for db in dbs:
        try:
            r, b = load_store(db)
        except (sqlite3.Error, KeyError, ValueError) as e:
            print(f"summarize.py: {db}: skipped, not a readable kforge store ({e})",
                  file=sys.stderr)
            notes.append(f"{db}: skipped, not a readable kforge store ({e})")
            continue
        man = manifest_of(db)
        for run in r:
            entry = man.get((run["problem"], run["mode"]), {})
            run["budget"] = a.budget or float(entry.get("budget_s") or 120)
            run["manifest"] = entry
        runs += r
        baselines += b
    # The latest run of each (problem, mode).
    latest = {}
    for run in sorted(runs, key=lambda r: r["started_at"]):
        key = (run["problem"], run["mode"])
        if key in latest:
            notes.append(f"{run['problem']} {run['mode']}: {latest[key]['db']} run "
                         f"{latest[key]['run_id']} superseded by {run['db']} run {run['run_id']}")
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
    md += ["## Built-in proposers (parameter, diagnosis)", "",
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
            md.append(f"| {p} | {MODE_TEXT[m]}{' (sim)' if r['simulated'] else ''} | "
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
           target_row("beats random: random's final in <= half its time (every problem)",
                      f"{sum(beats.values())}/{len(beats)} problems"
                      + (f" ({len(ties)} left out: neither improved on the start: "
                         f"{', '.join(ties)})" if ties else ""),
                      beats and all(beats.values()),
                      sim_only, bool(beats)),
           ""]
    if real and len(real) < len(have):
        md.append("Targets are judged on the GPU runs only; simulated runs are left out.\n")
    # ---- curves
    csv = ["problem,mode,simulated,db,run,evaluation,wall_s,search_s,gpu_s,best_ns,"
           "speedup_vs_start"]
    md += ["## Progress curves", "",
           "Best speedup over the start program vs search wall seconds (from the start "
           "program's first timing; x in units of the budget); curves.csv also holds the wall "
           "since the run started and cumulative GPU-seconds.", ""]
    for p in problems:
        series, sim, budget = {}, False, None
        for m in MODES:
            r = res.get((p, m))
            if not r or not r["start_ns"]:
                continue
            sim, budget = sim or r["simulated"], budget or r["budget"]
            series[m] = [(c["search_s"], r["start_ns"] / c["best_ns"]) for c in r["curve"]]
            for c in r["curve"]:
                csv.append(f"{p},{m},{int(r['simulated'])},{label(r['db'])},"
                           f"{r['run_id']},{c['eval_id']},{c['wall_s']:.3f},{c['search_s']:.3f},{c['gpu_s']:.6f},"
                           f"{c['best_ns']:.1f},{r['start_ns'] / c['best_ns']:.4f}")
        if not series:
            continue
        md += [f"### {p}{' (SIMULATED)' if sim else ''}", "", "```",
               ascii_plot(series, budget), "```", ""]
        if a.out_dir:
            os.makedirs(a.out_dir, exist_ok=True)
            svg = svg_plot(p, series, budget, sim)
            if svg:
                open(os.path.join(a.out_dir, f"{p}.svg"), "w").write(svg)
                md += [f"![{p}]({p}.svg)", ""]
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
