"""The tables of bench/search/allocation.sh (issue 27's suite comparisons) from its stores.

Per store (one `kforge suite` of one mode and seed), per problem: the start program's time (its
full tier, else its quick tier) and the best full-tier time as the suite went, so the speedup
over the start at every moment; the suite's geomean speedup over the problems whose start was
timed, on two clocks:
  wall s   since the suite started (the earliest run's started_at), compiles included
  GPU s    the device's busy time: each evaluation's pipeline wall (evidence wall_ms) less its
           compile gate's, summed in evaluation order (evaluations the store's cache answered
           cost nothing)
t95 is the first moment the geomean reaches 95% of a target: of the mode's own final geomean
(ratio: G >= 0.95 G_final; 0 whenever G_final < 1.053), of its own gain (G - 1 >= 0.95
(G_final - 1)), and of the gain of the better final geomean of sol and uniform of the same seed
("common": the fair target when one mode stops early; the headline sol vs uniform line).
Comparison 1 is sol vs uniform on these; comparison 2 compares the final speedups problem by
problem (uniform, i.e. the built-in proposers, vs random and vs param: "at least as good" within
1%) and their geomeans.

usage: python3 bench/search/allocation_table.py [--csv FILE] DIR...
  DIR: folders holding runs.jsonl and the stores it names (several calls, modes and seeds)
--csv writes the geomean curves as points; no plot here: kforge's report is the project's one
plotting code (issue 30), and per-problem curves come from `kforge report --compare`.
"""
import argparse
import json
import math
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
from datetime import datetime


def parse_time(text):
    f = "%Y-%m-%dT%H:%M:%S.%fZ" if "." in text else "%Y-%m-%dT%H:%M:%SZ"
    return datetime.strptime(text, f)


def device_ms(evidence):
    """An evaluation's device time: its pipeline wall less its compile gate's (0 when cached)."""
    if evidence.get("cached"):
        return 0.0
    wall = float(evidence.get("wall_ms", 0.0) or 0.0)
    for g in evidence.get("gates", []):
        if g.get("gate") == "compile":
            wall -= float((g.get("evidence") or {}).get("wall_ms", 0.0) or 0.0)
    return max(0.0, wall)


def load(db, tmp):
    """{problem: {"start": ns, "events": [(wall_s, gpu_s, best_ns)]}}, simulated, end clocks."""
    copy = os.path.join(tempfile.mkdtemp(dir=tmp), os.path.basename(db))
    for suffix in ("", "-wal"):
        if os.path.exists(db + suffix):
            shutil.copyfile(db + suffix, copy + suffix)
    con = sqlite3.connect(copy)
    runs = {r[0]: r for r in con.execute(
        "SELECT r.id, p.name, r.started_at FROM runs r JOIN problems p ON p.id = r.problem_id")}
    if not runs:
        return {}, False, (0.0, 0.0)
    t0 = min(parse_time(r[2]) for r in runs.values())
    simulated = any(u.startswith("simulated") for (u,) in con.execute("SELECT uuid FROM devices"))
    samples = {}
    for eid, t in con.execute("SELECT evaluation_id, time_ns FROM measurements WHERE label = 'candidate'"):
        samples.setdefault(eid, []).append(t)
    problems = {r[1]: {"start": None, "start_tier": None, "best": None, "events": []}
                for r in runs.values()}
    gpu_ms, wall = 0.0, 0.0
    rows = con.execute("SELECT e.id, e.tier, e.status, e.evidence_json, e.created_at, c.run_id, "
                       "c.proposer FROM evaluations e JOIN candidates c ON c.id = e.candidate_id "
                       "ORDER BY e.id").fetchall()
    for eid, tier, status, evidence, created, run_id, proposer in rows:
        if run_id not in runs:
            continue
        gpu_ms += device_ms(json.loads(evidence or "{}"))
        wall = (parse_time(created) - t0).total_seconds()
        if status != "passed" or eid not in samples or tier not in ("quick", "full"):
            continue
        p = problems[runs[run_id][1]]
        ns = statistics.median(samples[eid])
        if proposer == "start" and (p["start_tier"] != "full"):
            p["start"], p["start_tier"] = ns, tier
        if tier == "full" and (p["best"] is None or ns < p["best"]):
            p["best"] = ns
            p["events"].append((wall, gpu_ms / 1e3, ns))
    con.close()
    return problems, simulated, (wall, gpu_ms / 1e3)


def speedup(p, best):
    return p["start"] / best if best else 1.0


def curve(problems, clock):
    """[(t, geomean)] at every change of some problem's best, on clock 0 (wall) or 1 (GPU)."""
    timed = {n: p for n, p in problems.items() if p["start"]}
    if not timed:
        return []
    events = sorted((e[clock], n, e[2]) for n, p in timed.items() for e in p["events"])
    best = {n: None for n in timed}
    out = [(0.0, 1.0)]
    for t, n, ns in events:
        best[n] = ns
        g = math.exp(sum(math.log(speedup(timed[m], best[m])) for m in timed) / len(timed))
        out.append((t, g))
    return out


def t_reach(points, target):
    return next((t for t, g in points if g >= target - 1e-12), None)


def fmt(v, spec="{:.1f}"):
    return "-" if v is None else spec.format(v)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--csv")
    a = ap.parse_args(argv)
    tmp = tempfile.mkdtemp()
    suites = {}  # (mode, seed) -> dict
    for d in a.dirs:
        path = os.path.join(d, "runs.jsonl")
        if not os.path.exists(path):
            print(f"(no {path})", file=sys.stderr)
            continue
        for line in open(path):
            if not line.strip():
                continue
            r = json.loads(line)
            db = os.path.join(d, r["db"])
            if not os.path.exists(db):
                print(f"(no store {db})", file=sys.stderr)
                continue
            problems, sim, end = load(db, tmp)
            suites[(r["mode"], r["seed"])] = dict(r, problems=problems, simulated=sim, end=end,
                                                   wall=curve(problems, 0), gpu=curve(problems, 1))
    shutil.rmtree(tmp, ignore_errors=True)
    if not suites:
        print("no suites found")
        return 1
    if any(s["simulated"] for s in suites.values()):
        print("**SIMULATED device: the analytic model's times, never measurements; no target is "
              "checked on them.**\n")
    # comparison 1: time to 95% of the final geomean
    print("## Time to 95% of the final geomean speedup over the start programs\n")
    print("| mode | seed | problems (start timed) | final geomean | wall s (end) | GPU s (end) "
          "| t95 wall (own) | t95 GPU (own) | t95 GPU (own gain) | t95 wall (common gain) | t95 GPU (common gain) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    finals = {}
    for (m, seed), s in sorted(suites.items()):
        finals[(m, seed)] = s["wall"][-1][1] if s["wall"] else None
    rows_csv = []
    for (m, seed), s in sorted(suites.items()):
        g = finals[(m, seed)]
        # comparison 1's target: the better final of sol and uniform of this seed
        common = max((v for (mm, ss), v in finals.items()
                      if ss == seed and mm in ("sol", "uniform") and v), default=None)
        timed = sum(1 for p in s["problems"].values() if p["start"])
        own = lambda pts: t_reach(pts, 0.95 * g) if g else None
        gain = lambda pts: t_reach(pts, 1 + 0.95 * (g - 1)) if g else None
        com = lambda pts: t_reach(pts, 1 + 0.95 * (common - 1)) if common else None
        print(f"| {m} | {seed} | {len(s['problems'])} ({timed}) | {fmt(g, '{:.3f}')} | "
              f"{fmt(s['end'][0])} | {fmt(s['end'][1])} | {fmt(own(s['wall']))} | "
              f"{fmt(own(s['gpu']))} | {fmt(gain(s['gpu']))} | {fmt(com(s['wall']))} | "
              f"{fmt(com(s['gpu']))} |")
        for clock in ("wall", "gpu"):
            for t, gm in s[clock]:
                rows_csv.append((m, seed, clock, t, gm))
    for seed in sorted({sd for _, sd in suites}):
        sol, uni = suites.get(("sol", seed)), suites.get(("uniform", seed))
        if sol and uni and finals[("sol", seed)] and finals[("uniform", seed)]:
            common = max(finals[("sol", seed)], finals[("uniform", seed)])
            target = 1 + 0.95 * (common - 1)
            ts, tu = t_reach(sol["gpu"], target), t_reach(uni["gpu"], target)
            saved = (f"{100 * (1 - ts / tu):.0f}% fewer GPU-seconds" if ts is not None and tu
                     else "sol never reached it" if ts is None else "uniform never reached it"
                     if tu is None else "-")
            print(f"\nseed {seed}: sol vs uniform to 95% of the gain of the common final geomean "
                  f"({common:.3f}, so {target:.3f}): {fmt(ts)} vs {fmt(tu)} GPU s: {saved} "
                  f"(target: >= 30% fewer)")
    # comparison 2: per problem at equal budget
    print("\n## Final speedup over the start, per problem (built-in = uniform allocation)\n")
    modes = [m for m in ("sol", "uniform", "random", "param") if any(k[0] == m for k in suites)]
    seeds = sorted({sd for _, sd in suites})
    names = sorted({n for s in suites.values() for n in s["problems"]})
    print("| problem | " + " | ".join(f"{m} s{sd}" for sd in seeds for m in modes) + " |")
    print("|---|" + "---|" * (len(seeds) * len(modes)))
    final = {}
    for n in names:
        cells = []
        for sd in seeds:
            for m in modes:
                p = suites.get((m, sd), {}).get("problems", {}).get(n)
                v = speedup(p, p["best"]) if p and p["start"] else None
                final[(m, sd, n)] = v
                cells.append(fmt(v, "{:.3f}"))
        print(f"| {n} | " + " | ".join(cells) + " |")
    for sd in seeds:
        for other in ("random", "param"):
            pairs = [(final.get(("uniform", sd, n)), final.get((other, sd, n))) for n in names]
            pairs = [(u, o) for u, o in pairs if u and o]
            if not pairs:
                continue
            ok = sum(1 for u, o in pairs if u >= 0.99 * o)
            gu = math.exp(sum(math.log(u) for u, _ in pairs) / len(pairs))
            go = math.exp(sum(math.log(o) for _, o in pairs) / len(pairs))
            print(f"\nseed {sd}: built-in at least as good as {other} (within 1%) on {ok} of "
                  f"{len(pairs)} problems ({100 * ok / len(pairs):.0f}%; target >= 80%), geomean "
                  f"{gu:.3f} vs {go:.3f} (target: better)")
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("mode,seed,clock,t_s,geomean\n")
            for r in rows_csv:
                f.write(f"{r[0]},{r[1]},{r[2]},{r[3]:.3f},{r[4]:.5f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
