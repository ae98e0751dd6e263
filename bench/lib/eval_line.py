#!/usr/bin/env python3
"""One line from a `kforge eval --json` report, for the GPU check scripts' summaries:

    eval_line.py REPORT.json STDERR.txt [MAX_MESSAGE_CHARS]

prints `STATUS MEDIAN_US MESSAGE` (median in microseconds or `-`; `(SIMULATED device)` appended
for the simulated device), or `no_report - <last stderr line>` when the report is missing or
not JSON (the evaluation crashed or was killed)."""
import json
import sys


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    width = int(argv[3]) if len(argv) > 3 else 200
    try:
        with open(argv[1]) as f:
            j = json.load(f)
    except (OSError, ValueError):
        try:
            with open(argv[2]) as f:
                err = f.read().strip().splitlines()
        except OSError:
            err = []
        print("no_report -", err[-1][:200] if err else "(no stderr)")
        return
    t = j.get("timing", {}).get("median_ns")
    msg = j.get("message", "").replace("\n", " ")[:width]
    sim = " (SIMULATED device)" if j.get("simulated") else ""
    print(j.get("status"), "%.2f" % (t / 1e3) if t else "-", msg + sim)


if __name__ == "__main__":
    main(sys.argv)
