#!/usr/bin/env python3
"""Cross-checks a `kforge report` JSON against the store it was made from (issue 9: the report's
numbers must match the store). For every problem of the report: the best candidate's median is
recomputed from its evaluation's 'candidate' samples in SQLite; each baseline's median from the
'baseline:<name>' samples of the run at the best's shapes; each speedup as baseline median / best
median; and the suite's geomean speedups and fast_p from those recomputed values. Prints one line
per check and exits 1 on any mismatch (relative tolerance 1e-9).

usage: check_report.py STORE REPORT_JSON
"""
import json
import math
import sqlite3
import statistics
import sys

TOL = 1e-9


def close(a, b):
    return a is not None and b is not None and abs(a - b) <= TOL * max(abs(a), abs(b), 1e-30)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    db = sqlite3.connect(sys.argv[1])
    report = json.load(open(sys.argv[2]))
    bad = 0
    checks = 0
    speedups = {}  # baseline name -> [speedup per problem with a best]
    measured = {}  # baseline name -> problems with that baseline (fast_p's denominator)

    def check(ok, text):
        nonlocal bad, checks
        checks += 1
        if not ok:
            bad += 1
        print(("ok    " if ok else "WRONG ") + text)

    for p in report["problems"]:
        best = p.get("best")
        for b in p.get("baselines", []):
            measured[b["name"]] = measured.get(b["name"], 0) + 1
        if not best:
            print(f"-     {p['name']}: no best candidate (nothing to check)")
            continue
        rows = db.execute("select time_ns from measurements where evaluation_id=? and "
                          "label='candidate'", (best["evaluation_id"],)).fetchall()
        med = statistics.median(r[0] for r in rows) if rows else None
        check(close(med, best["time"]["median_ns"]),
              f"{p['name']}: best median {best['time']['median_ns']:.1f} ns vs store "
              f"{med if med is None else round(med, 1)} ns ({len(rows)} samples, evaluation "
              f"{best['evaluation_id']})")
        for b in p.get("baselines", []):
            rows = db.execute(
                "select m.time_ns from measurements m join evaluations e on e.id=m.evaluation_id "
                "join candidates c on c.id=e.candidate_id where c.run_id=? and c.problem_id=? and "
                "e.shapes_key=? and m.label=?",
                (p["run_id"], p["problem_id"], best["shapes_key"], b["label"])).fetchall()
            bmed = statistics.median(r[0] for r in rows) if rows else None
            check(close(bmed, b["time"]["median_ns"]),
                  f"{p['name']}: {b['name']} median {b['time']['median_ns']:.1f} ns vs store "
                  f"{bmed if bmed is None else round(bmed, 1)} ns ({len(rows)} samples)")
            if bmed and med:
                sp = bmed / med
                check(close(sp, b.get("speedup")),
                      f"{p['name']}: speedup over {b['name']} {b.get('speedup')} vs {sp:.6f}")
                speedups.setdefault(b["name"], []).append(sp)
    for sb in report.get("suite", {}).get("baselines", []):
        xs = speedups.get(sb["name"], [])
        if not xs:
            continue
        geo = math.exp(sum(math.log(x) for x in xs) / len(xs))
        check(close(geo, sb.get("geomean_speedup")),
              f"suite: geomean speedup over {sb['name']} {sb.get('geomean_speedup')} vs {geo:.6f} "
              f"({len(xs)} problems)")
        for f in sb.get("fast_p", []):
            frac = sum(1 for x in xs if x > f["p"]) / measured[sb["name"]]
            check(close(frac, f.get("fraction")) or (frac == 0 and f.get("fraction") == 0),
                  f"suite: fast_{f['p']} over {sb['name']} {f.get('fraction')} vs {frac:.6f}")
    print(f"{checks} checks, {bad} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
