"""The table of bench/search/free_knobs.sh: per problem the free and baked runs side by side
(evaluations, per wall minute and per search minute, nvcc compiles, best time) and the free/baked
ratio of evaluations per minute; the geomean of the ratios over the problems with both runs.

usage: python3 bench/search/free_knobs_table.py DIR...   (folders holding runs.jsonl)
"""
import json
import math
import os
import sys


def load(dirs):
    runs = {}
    for d in dirs:
        path = os.path.join(d, "runs.jsonl")
        if not os.path.exists(path):
            print(f"(no {path})", file=sys.stderr)
            continue
        for line in open(path):
            line = line.strip()
            if line:
                r = json.loads(line)
                runs[(r["problem"], r["mode"])] = r  # a later call's run replaces an earlier one
    return runs


def fmt(v, spec="{:.1f}"):
    return "-" if v is None else spec.format(v)


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    runs = load(argv)
    problems = sorted({p for p, _ in runs})
    print("| problem | mode | wall s | evaluations (timed) | eval/min | search s | eval/search-min "
          "| nvcc compiles | free proposals | best us |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    ratios, search_ratios = [], []
    for p in problems:
        for mode in ("free", "baked"):
            r = runs.get((p, mode))
            if not r:
                continue
            print(f"| {p} | {mode} | {fmt(r.get('wall_s'))} | {r.get('evaluations', '-')} "
                  f"({r.get('timed', '-')}) | {fmt(r.get('evals_per_min'), '{:.2f}')} | "
                  f"{fmt(r.get('search_s'))} | {fmt(r.get('search_evals_per_min'), '{:.2f}')} | "
                  f"{r.get('compiles', '-')} | {r.get('proposed_free', '-')} | "
                  f"{fmt(r.get('best_us'), '{:.3f}')} |")
        f, b = runs.get((p, "free")), runs.get((p, "baked"))
        if f and b:
            if f.get("evals_per_min") and b.get("evals_per_min"):
                ratios.append(f["evals_per_min"] / b["evals_per_min"])
            if f.get("search_evals_per_min") and b.get("search_evals_per_min"):
                search_ratios.append(f["search_evals_per_min"] / b["search_evals_per_min"])
    print()
    g, gs = geomean(ratios), geomean(search_ratios)
    print(f"- evaluations per wall minute, free / baked: geomean {fmt(g, '{:.2f}')}x over "
          f"{len(ratios)} problems ({', '.join(f'{x:.2f}x' for x in ratios)})")
    print(f"- evaluations per search minute (after the start's first full tier), free / baked: "
          f"geomean {fmt(gs, '{:.2f}')}x over {len(search_ratios)} problems")
    print(f"- issue 27 target (>= 5x per minute): "
          f"{'met' if g and g >= 5 else 'not met'} on wall minutes, "
          f"{'met' if gs and gs >= 5 else 'not met'} on search minutes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
