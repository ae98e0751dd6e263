#!/usr/bin/env bash
# Issue 24 on the GPU: the KernelBench level-1 convolution files -> specs (per-file import
# status) -> `kforge suite --device cuda` under one budget -> PyTorch baselines (eager and
# torch.compile, stored into each problem's run; fp32 problems run with cuDNN TF32 off, the
# fp32_strict policy) -> PyTorch's defaults (cuDNN TF32 on) timed apart and labelled ->
# `kforge report`. One device call; from the repo root, with the carried binary.
#
# usage: OUT=DIR bash bench/conv/run.sh KERNELBENCH_CHECKOUT [GLOB]
#   KERNELBENCH_CHECKOUT: a ScalingIntelligence/KernelBench checkout (outside the repository);
#   GLOB: the files under level1/ (default '*conv*': standard, depthwise, pointwise, transposed)
# environment: KFORGE (.carry/bin/kforge), DEVICE (cuda; sim for a dry run), SUITE_S (300, the
#   suite's --budget-wall), MODES (eager,compile_default), KFORGE_PYTHON (python with torch).
# Results under $OUT/conv: import.log, status.txt (one line per file: imported or the reason,
#   then the planner's verdict: a start program or "refused: <form>"), specs/, suite.log,
#   baseline.log (fp32_strict: cudnn.allow_tf32 False), baseline_tf32_default.json (PyTorch's
#   defaults, cuDNN TF32 on, labelled, not stored as the baseline), report/, steps.txt.
set -uo pipefail
R=$PWD
KB=${1:?usage: OUT=DIR bash bench/conv/run.sh KERNELBENCH_CHECKOUT [GLOB]}
GLOB=${2:-*conv*}
K=${KFORGE:-$R/.carry/bin/kforge}
DEVICE=${DEVICE:-cuda}
SUITE_S=${SUITE_S:-300}
MODES=${MODES:-eager,compile_default}
[ -n "${KFORGE_PYTHON:-}" ] || [ -x "$R/.venv/bin/python" ] || export KFORGE_PYTHON=python3
PY=${KFORGE_PYTHON:-$R/.venv/bin/python}
O=${OUT:-/tmp/kforge-out}/conv
mkdir -p "$O/specs" "$O/tf32_default"
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
files=("$KB"/level1/$GLOB.py)
[ ${#files[@]} -gt 0 ] || { echo "no files match $KB/level1/$GLOB.py" >&2; exit 2; }

# 1. Import (one Python process); a failed file keeps no spec.
step import 1800 "$K" import kernelbench "${files[@]}" -o "$O/specs" > "$O/import.log" 2>&1
grep '^FAILED:' "$O/import.log" | sed -n 's/.*(spec written to \(.*\.json\)).*/\1/p' |
    while read -r f; do rm -f "$f"; done

# 2. Per file: import status, and whether the planner synthesizes a start program (a form
#    kforge does not lower yet is refused by name here, not in the suite).
: > "$O/status.txt"
for f in "${files[@]}"; do
    b=$(basename "$f" .py)
    line=$(grep -E "^(ok|FAILED): [^ ]*/$b\.py" "$O/import.log" | head -1 | cut -c1-160)
    spec="$O/specs/kb_$b.json"
    plan="-"
    if [ -f "$spec" ]; then
        # --rounds 0: the start program is synthesized (or refused) and nothing is evaluated
        out=$(timeout 120 "$K" optimize "$spec" --device sim --rounds 0 --db "$O/plan.db" 2>&1)
        if echo "$out" | grep -q 'none can be synthesized'; then
            plan="refused: $(echo "$out" | grep -o 'not expressible.*' | head -1 | cut -c1-140)"
        else
            plan="start program synthesized"
        fi
    fi
    printf '%s | %s | %s\n' "$b" "${line%%:*}" "$plan" >> "$O/status.txt"
done
cat "$O/status.txt"

# 3. The suite over the specs (the refused forms are skipped by its start phase).
step suite $((SUITE_S + 200)) "$K" suite "$O/specs" --device "$DEVICE" --budget-wall "$SUITE_S" \
    --db "$DB" --out "$O/best" > "$O/suite.log" 2>&1

# 4. Baselines under the problems' policy (fp32_strict: cudnn.allow_tf32 = False), stored.
if [ "$DEVICE" = cuda ]; then
    step baseline 1800 "$K" baseline "$O"/specs/*.json --db "$DB" --latest-run --modes "$MODES" \
        > "$O/baseline.log" 2>&1
    # PyTorch's defaults (cuDNN TF32 on): the same specs under the tf32 policy, timed apart
    for s in "$O"/specs/*.json; do
        "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); d["precision"]["policy"]="tf32"; json.dump(d, open(sys.argv[2], "w"))' \
            "$s" "$O/tf32_default/$(basename "$s")"
    done
    step baseline_tf32_default 1800 "$K" baseline "$O"/tf32_default/*.json --db "$O/tf32_default.db" \
        --modes "$MODES" --json > "$O/baseline_tf32_default.json" 2> "$O/baseline_tf32_default.log"
fi

# 5. The report over the suite's runs.
runs=$("$K" db runs --db "$DB" | awk 'NR > 1 && $1 ~ /^[0-9]+$/ {print $1}' | sort -n | tr '\n' ' ')
[ -n "$runs" ] && step report 120 "$K" report $runs --db "$DB" --out "$O/report" \
    --calibration "$R/bench/calibration/h200.json" > "$O/report.log" 2>&1
echo "imported $(ls "$O/specs" | wc -l) of ${#files[@]}; planner: $(grep -c 'synthesized' "$O/status.txt") start programs, $(grep -c 'refused' "$O/status.txt") refused" | tee -a "$O/steps.txt"
