#!/usr/bin/env bash
# Issue 9 on the GPU: KernelBench-format modules -> problem specs -> `kforge suite` under one
# budget -> PyTorch baselines stored into each problem's run -> `kforge report` -> the report's
# numbers cross-checked against the store (check_report.py). One device call; from the repo root.
#
# usage: OUT=DIR bash bench/import/run.sh [KERNELBENCH_FILE...]   (default examples/kernelbench/*.py)
# environment: KFORGE (.carry/bin/kforge), DEVICE (cuda; sim for a test run), SUITE_S (150, the
#   suite's --budget-wall), MODES (eager,compile_default: max-autotune tunes for minutes per
#   problem), KFORGE_PYTHON (python3 with torch, for import and baseline), NAME (import: the
#   folder under $OUT), DB_NAME (kforge.db), SPECS (a folder of specs imported earlier: no
#   import), PROPOSERS (kforge's default; e.g. "parameter" for the parameter-only comparison),
#   PROFILE_TOP (kforge's default 2; 0 for modes that read no diagnosis), BASELINE (1; 0: none).
# Results under $OUT/$NAME: import.log, specs/, suite.log, baseline.log, report/ (md, html,
# json), check.txt, the store, steps.txt (rc and wall of each step).
set -uo pipefail
R=$PWD
K=${KFORGE:-$R/.carry/bin/kforge}
DEVICE=${DEVICE:-cuda}
SUITE_S=${SUITE_S:-150}
MODES=${MODES:-eager,compile_default}
# the GPU machine has torch system-wide and no .venv: without this every import failed there
# ("no Python found", 2026-12-01 s7)
[ -n "${KFORGE_PYTHON:-}" ] || [ -x "$R/.venv/bin/python" ] || export KFORGE_PYTHON=python3
O=${OUT:-/tmp/kforge-out}/${NAME:-import}
mkdir -p "$O/specs"
DB=$O/${DB_NAME:-kforge.db}
extra=()
[ -n "${PROPOSERS:-}" ] && extra+=(--proposers "$PROPOSERS")
[ -n "${PROFILE_TOP:-}" ] && extra+=(--profile-top "$PROFILE_TOP")
files=("$@")
[ ${#files[@]} -gt 0 ] || files=("$R"/examples/kernelbench/*.py)
: > "$O/steps.txt"
. "$R/bench/lib/step.sh"  # step NAME TIMEOUT_S CMD...
. "$R/bench/lib/calibration.sh"  # cal_file

# 1. Import, all files in one Python process (a torch start costs seconds); a file that fails
#    (unsupported op, degenerate problem) keeps no spec: a degenerate one's spec is written for
#    inspection ("spec written to PATH") and removed here.
: > "$O/import.log"
if [ -n "${SPECS:-}" ]; then
    cp "$SPECS"/*.json "$O/specs/"
    files=()
else
    "$K" import kernelbench "${files[@]}" -o "$O/specs" > "$O/import.log" 2>&1
    echo "  (import rc $?)" >> "$O/import.log"
    grep '^FAILED:' "$O/import.log" | sed -n 's/.*(spec written to \(.*\.json\)).*/\1/p' |
        while read -r f; do rm -f "$f"; echo "  removed $f (failed)" >> "$O/import.log"; done
fi
echo "import: $(ls "$O/specs" | wc -l) specs from ${#files[@]} files${SPECS:+ (copied from $SPECS)}" | tee -a "$O/steps.txt"

# 2. The suite over the imported specs (start programs synthesized from each problem).
step suite $((SUITE_S + 150)) "$K" suite "$O/specs" --device "$DEVICE" --budget-wall "$SUITE_S" \
    --db "$DB" --out "$O/best" "${extra[@]}" > "$O/suite.log" 2>&1

# 3. PyTorch baselines into each problem's newest run (the suite's).
if [ "$DEVICE" = cuda ] && [ "${BASELINE:-1}" = 1 ]; then
    step baseline 300 "$K" baseline "$O"/specs/*.json --db "$DB" --latest-run --modes "$MODES" \
        > "$O/baseline.log" 2>&1
fi

# 4. The report over the suite's runs, and its numbers against the store.
runs=$("$K" db runs --db "$DB" | awk 'NR > 1 && $1 ~ /^[0-9]+$/ {print $1}' | sort -n | tr '\n' ' ')
cal=$(cal_file)
step report 60 "$K" report $runs --db "$DB" --out "$O/report" \
    ${cal:+--calibration "$cal"} > "$O/report.log" 2>&1
step check 60 python3 "$R/bench/import/check_report.py" "$DB" "$O/report/report.json" \
    > "$O/check.txt" 2>&1
tail -1 "$O/check.txt"
