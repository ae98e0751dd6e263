"""The KernelBench coverage table of bench/kernelbench/coverage.sh: per problem, whether it
imported, whether the fusion planner synthesized a start program (every kernel lowered) and, where not,
the construct that blocks it (the importer's or the planner's own words); totals per level.

usage: python3 summarize.py OUT_DIR LEVEL... > coverage.md
"""
import os
import re
import sys

CELL = 160  # characters of a reason kept in the table


def cell(text):
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= CELL else text[:CELL - 3] + "..."


def import_lines(path):
    """[(problem file stem, ok, spec path or None, message)] from `kforge import` output."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"^(ok|FAILED): (.*?\.py): (.*)$", line.rstrip("\n"))
            if not m:
                continue
            status, file, msg = m.groups()
            spec = re.match(r"-> (\S+\.json) \(", msg)
            out.append((os.path.basename(file)[:-3], status == "ok",
                        spec.group(1) if spec and status == "ok" else None, msg))
    return out


def plan_verdict(log):
    """(planned, reason) from a `kforge optimize --rounds 0` log ending in "rc=N"."""
    if not os.path.exists(log):
        return False, "not planned (no log)"
    with open(log, encoding="utf-8", errors="replace") as f:
        text = f.read()
    rc = re.search(r"rc=(\d+)\s*$", text)
    rc = int(rc.group(1)) if rc else -1
    m = re.search(r"none can be synthesized: (.*)", text)
    if m:
        return False, "planner: " + m.group(1)
    if "synthesized one from the problem" in text:
        return True, ""  # (rc 1 with --rounds 0: nothing was evaluated, by design)
    if rc == 124:
        return False, "the planner timed out (coverage.sh's limit, 300 s)"
    last = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("rc=")]
    return False, f"plan failed (rc {rc}): " + (last[-1] if last else "")


def check_kind(msg):
    if "interpreter = PyTorch (fp64)" in msg:
        return "reduced" if "reduced" in msg else "full size"
    return "not checked"


def level_table(out_dir, level):
    rows = import_lines(os.path.join(out_dir, f"level{level}", "import.log"))
    lines = [f"## Level {level}", "",
             "| problem | imported | numeric check | planned | what blocks it |",
             "|---|---|---|---|---|"]
    n_imp = n_plan = n_checked = 0
    for stem, ok, spec, msg in sorted(rows, key=lambda r: _order(r[0])):
        planned, why = False, cell(msg)
        check = "-"
        if ok:
            n_imp += 1
            check = check_kind(msg)
            n_checked += check != "not checked"
            log = os.path.join(out_dir, f"level{level}", "plan",
                               os.path.basename(spec)[:-5] + ".log")
            planned, why = plan_verdict(log)
            why = cell(why)
            n_plan += planned
        lines.append(f"| {stem} | {'yes' if ok else 'no'} | {check} | "
                     f"{'yes' if planned else 'no'} | {why} |")
    total = len(rows)
    summary = (f"Level {level}: {total} problems, {n_imp} imported ({n_checked} checked "
               f"numerically), {n_plan} planned (a start program with every kernel lowered)")
    return lines + ["", summary, ""], summary


def _order(stem):
    m = re.match(r"(\d+)", stem)
    return (int(m.group(1)) if m else 1 << 30, stem)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir, levels = argv[0], argv[1:]
    body, totals = [], []
    for level in levels:
        lines, summary = level_table(out_dir, level)
        body += lines
        totals.append(summary)
    print("# KernelBench coverage: import and plan (CPU, simulated device)\n")
    print("Imported: `kforge import kernelbench` wrote a spec that checks (numeric check: the fp64 "
          "interpreter against PyTorch in fp64, at reduced sizes where they re-bind). Planned: "
          "`kforge optimize SPEC --device sim --rounds 0` synthesized a start program, every "
          "kernel checked and lowered; no GPU gate or timing here.\n")
    print("\n".join(body))
    print("## Totals\n")
    print("\n".join(f"- {t}" for t in totals))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
