"""Progress curves of summarize.py, drawn by kforge itself: `kforge report --compare` (report/
compare.h) writes the charts (best speedup over the start against search wall seconds and against
GPU-seconds, one curve per run) as SVG, and its compare.json holds every point of the step curves,
which the Markdown shows as a table. kforge's report is the one plotting code of the project."""

import json
import os
import subprocess
import tempfile

MODE_TEXT = {"builtin": "built-in (diagnosis,parameter)", "random": "random",
             "param": "parameter only"}


def compare_curves(kforge, runs, out_dir=None):
    """`kforge report --compare` of `runs` [(store path, run id)], all of one problem, into
    out_dir (compare-wall.svg, compare-gpu.svg, compare.json, compare.html), or into a temporary
    folder when out_dir is None. Returns (compare.json as a dict, None) or (None, why not)."""
    if not kforge:
        return None, "no kforge binary (pass --kforge or set KFORGE)"
    with tempfile.TemporaryDirectory(prefix="kforge-compare-") as tmp:
        out = out_dir or tmp
        cmd = [kforge, "report", "--compare", *[f"{db}:{run}" for db, run in runs],
               "-o", out, "--format", "json,html", "--json"]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.SubprocessError) as e:
            return None, f"kforge report --compare did not run: {e}"
        if p.returncode != 0:
            try:
                why = json.loads(p.stdout).get("error") or p.stderr.strip()
            except ValueError:
                why = p.stderr.strip() or p.stdout.strip()
            return None, f"kforge report --compare failed (exit {p.returncode}): {why[-300:]}"
        with open(os.path.join(out, "compare.json")) as f:
            return json.load(f), None


def points_table(compare, modes, budget):
    """Markdown table of every point of the step curves in `compare` (compare.json); `modes`
    maps a run's position in it to its mode (summarize.py's MODES), budget is the wall budget."""
    rows = ["| mode | run | evaluation | search s | search / budget | GPU-seconds | best (us) | "
            "speedup vs start |", "|---|---|---|---|---|---|---|---|"]
    for mode, run in zip(modes, compare["runs"]):
        for s in run["steps"]:
            rows.append(f"| {MODE_TEXT.get(mode, mode)} | {run['label']} | {s['evaluation_id']} | "
                        f"{s['search_s']:.1f} | {s['search_s'] / budget:.2f} | {s['gpu_s']:.3f} | "
                        f"{s['best_ns'] / 1e3:.1f} | {s['speedup']:.3f}x |")
    return "\n".join(rows)
