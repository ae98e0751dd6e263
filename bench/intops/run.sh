#!/usr/bin/env bash
# Issue 25 (integer and bool tensors) on the GPU: the KernelBench level-1 files with index
# outputs, bool masks, integer targets and triangular masks (51 argmax, 52 argmin, 93 masked
# cumsum, 95 cross entropy, 14/15 triu/tril of a matmul) plus kforge's own examples 60-65 ->
# specs (per-file import status) -> the planner's verdict per spec -> `kforge eval` of each
# start program through every gate (correctness_full against the GPU fp64 reference, exact
# equality for i64 outputs) -> `kforge suite --device cuda` under one budget -> PyTorch
# baselines (eager and torch.compile) stored into each problem's run -> `kforge report`.
# One device call; from the repo root, with the carried binary (as bench/conv/run.sh).
#
# usage: OUT=DIR bash bench/intops/run.sh KERNELBENCH_CHECKOUT
# environment: KFORGE (.carry/bin/kforge), DEVICE (cuda; sim for a dry run), SUITE_S (240, the
#   suite's --budget-wall), MODES (eager,compile_default), KFORGE_PYTHON (python with torch),
#   FILES (level-1 stems, default "51_* 52_* 93_* 95_* 14_* 15_*").
# Results under $OUT/intops: import.log, status.txt (per file: import status, planner verdict,
#   the start program's gates), specs/, eval/<spec>.json (kforge eval --json), suite.log,
#   baseline.log, report/, steps.txt.
set -uo pipefail
R=$PWD
KB=${1:?usage: OUT=DIR bash bench/intops/run.sh KERNELBENCH_CHECKOUT}
K=${KFORGE:-$R/.carry/bin/kforge}
DEVICE=${DEVICE:-cuda}
SUITE_S=${SUITE_S:-240}
MODES=${MODES:-eager,compile_default}
[ -n "${KFORGE_PYTHON:-}" ] || [ -x "$R/.venv/bin/python" ] || export KFORGE_PYTHON=python3
O=${OUT:-/tmp/kforge-out}/intops
mkdir -p "$O/specs" "$O/eval" "$O/programs"
DB=$O/kforge.db
: > "$O/steps.txt"
step() {  # step NAME TIMEOUT_S CMD...: runs CMD under a timeout, logs rc and wall
    local name=$1 limit=$2; shift 2
    local s=$SECONDS
    timeout --kill-after=10 "$limit" "$@"
    local rc=$?
    echo "$name rc=$rc wall_s=$((SECONDS - s))" | tee -a "$O/steps.txt"
    return $rc
}
shopt -s nullglob
files=()
read -r -a patterns <<< "${FILES:-51_* 52_* 93_* 95_* 14_* 15_*}"  # no globbing here
for g in "${patterns[@]}"; do
    for f in "$KB"/level1/$g.py; do [ -f "$f" ] && files+=("$f"); done
done
files+=("$R"/examples/kernelbench/6[0-5]_*.py)
[ ${#files[@]} -gt 0 ] || { echo "no files to import (KernelBench level-1 under $KB/level1)" >&2; exit 2; }

# 1. Import (one Python process); a failed file keeps no spec.
step import 1200 "$K" import kernelbench "${files[@]}" -o "$O/specs" > "$O/import.log" 2>&1
grep '^FAILED:' "$O/import.log" | sed -n 's/.*(spec written to \(.*\.json\)).*/\1/p' |
    while read -r f; do rm -f "$f"; done

# 2. Per file: import status, the planner's start program (or why not), and that program
#    through every gate on the device (kforge eval --json: correctness_small/hidden against the
#    CPU interpreter, correctness_full at the real shape against the GPU fp64 reference).
: > "$O/status.txt"
for f in "${files[@]}"; do
    b=$(basename "$f" .py)
    line=$(grep -E "^(ok|FAILED): [^ ]*/$b\.py" "$O/import.log" | head -1 | cut -c1-160)
    found=("$O"/specs/*"$b".json)
    spec=${found[0]:-}
    plan="-" gates="-"
    if [ -n "$spec" ]; then
        out=$(timeout 180 "$K" optimize "$spec" --device sim --rounds 0 --db "$O/plan.db" 2>&1)
        if echo "$out" | grep -q 'none can be synthesized'; then
            plan="refused: $(echo "$out" | grep -o 'not expressible.*\|no configuration.*' | head -1 | cut -c1-140)"
        else
            plan="start program synthesized"
            prog="$O/programs/$b.kf"
            python3 - "$O/plan.db" "$(basename "$spec" .json)" > "$prog" 2>/dev/null <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
row = db.execute("select c.program_text from candidates c join problems p on p.id = c.problem_id "
                 "where p.name = ? order by c.id desc limit 1", (sys.argv[2],)).fetchone()
print(row[0] if row else "", end="")
PY
            if [ -s "$prog" ]; then
                timeout 900 "$K" eval "$spec" --program "$prog" --tier full --device "$DEVICE" --json \
                    > "$O/eval/$b.json" 2> "$O/eval/$b.log"
                gates="eval rc=$? $(grep -o '"status": *"[a-z_]*"' "$O/eval/$b.json" | head -1)"
            else
                gates="(start program not found in plan.db)"
            fi
        fi
    fi
    printf '%s | %s | %s | %s\n' "$b" "${line%%:*}" "$plan" "$gates" >> "$O/status.txt"
done
cat "$O/status.txt"

# 3. The suite over the specs.
step suite $((SUITE_S + 200)) "$K" suite "$O/specs" --device "$DEVICE" --budget-wall "$SUITE_S" \
    --db "$DB" --out "$O/best" > "$O/suite.log" 2>&1

# 4. Baselines (eager, torch.compile), stored into each problem's newest run.
if [ "$DEVICE" = cuda ]; then
    step baseline 1200 "$K" baseline "$O"/specs/*.json --db "$DB" --latest-run --modes "$MODES" \
        > "$O/baseline.log" 2>&1
fi

# 5. The report over the suite's runs.
runs=$("$K" db runs --db "$DB" | awk 'NR > 1 && $1 ~ /^[0-9]+$/ {print $1}' | sort -n | tr '\n' ' ')
[ -n "$runs" ] && step report 120 "$K" report $runs --db "$DB" --out "$O/report" \
    --calibration "$R/bench/calibration/h200.json" > "$O/report.log" 2>&1
echo "imported $(ls "$O/specs" | wc -l) of ${#files[@]}; planner: $(grep -c 'synthesized' "$O/status.txt") start programs, $(grep -c 'refused' "$O/status.txt") refused; eval passed: $(grep -c '"passed"' "$O/status.txt")" | tee -a "$O/steps.txt"
