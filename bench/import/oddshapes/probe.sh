#!/usr/bin/env bash
# Unfriendly shapes end to end: each KernelBench-format module of cases.py (odd / prime /
# not-a-multiple-of-8 dims, rows of 1 and 3, 1-element tensors, bf16/fp16 rows that are not
# 16-byte aligned, reductions over dim 0) -> `kforge import` -> `kforge optimize` (synthesizes the
# start program, checks it, runs every gate on DEVICE) -> `kforge compile` of the planned program
# with nvcc. One table line per case in $OUT/results.txt. From the repo root.
#
# usage: [DEVICE=sim|cuda] OUT=DIR bash bench/import/oddshapes/probe.sh [CASE...]  (default: all)
# environment: KFORGE (build/oddshapes/cli/kforge, else .carry/bin/kforge), KFORGE_PYTHON
#   (.venv/bin/python, else python3), COMPILE_GEMM (cases whose GEMM is compiled with nvcc here:
#   a CUTLASS GEMM takes 2-7 min on a 2-core machine; default on sim: g02 g08 g12; on cuda
#   none: optimize compiled them for its gates, shown as "gates"), ROUNDS (1: the start program
#   and one round), JOBS (cases at once: sim 1, cuda 6; the gates' timings are not the point).
# Columns: case | import | plan | gates | compile | note. "refused" is a clear refusal of a case
# that truly cannot be expressed (a degenerate problem); "FAIL" anything else.
set -uo pipefail
R=$PWD
D=$R/bench/import/oddshapes
DEVICE=${DEVICE:-sim}
K=${KFORGE:-}
[ -n "$K" ] || { [ -x "$R/build/oddshapes/cli/kforge" ] && K=$R/build/oddshapes/cli/kforge; }
[ -n "$K" ] || K=$R/.carry/bin/kforge
[ -n "${KFORGE_PYTHON:-}" ] || { [ -x "$R/.venv/bin/python" ] && export KFORGE_PYTHON=$R/.venv/bin/python; } ||
    export KFORGE_PYTHON=python3
O=${OUT:-/tmp/kforge-oddshapes}
mkdir -p "$O/specs" "$O/logs"
if [ "$DEVICE" = cuda ]; then COMPILE_GEMM=${COMPILE_GEMM:-none}; else COMPILE_GEMM=${COMPILE_GEMM:-g02 g08 g12}; fi
cases=("$@")
[ ${#cases[@]} -gt 0 ] || mapfile -t cases < <(python3 "$D/cases.py" --list)
# the modules, written from cases.py's table (an unknown case name stops here)
python3 "$D/cases.py" "$O/modules" "${cases[@]}" || exit 2
files=()
for c in "${cases[@]}"; do files+=("$O/modules/$c.py"); done

# 1. import, all modules in one Python process
"$K" import kernelbench "${files[@]}" -o "$O/specs" > "$O/logs/import.log" 2>&1
T=$O/results.txt
{
    echo "# oddshapes probe, DEVICE=$DEVICE$([ "$DEVICE" = sim ] && echo ' (SIMULATED: gates on the simulated h200 model; compile = real nvcc sm_90a)'), $(date -u +%FT%TZ), $(git -C "$R" rev-parse --short HEAD 2>/dev/null)"
    printf '%-26s | %-7s | %-7s | %-7s | %-7s | %s\n' case import plan gates compile note
} > "$T"
mkdir -p "$O/lines"
one() {  # one CASE: its table line into $O/lines/CASE
local c=$1 imp plan gates comp note spec out log rc fusion gl kf isgemm
row() { printf '%-26s | %-7s | %-7s | %-7s | %-7s | %s\n' "$@" > "$O/lines/$c"; cat "$O/lines/$c"; }
{
    spec=$O/specs/$c.json
    spec=$O/specs/$c.json
    line=$(grep -F "/$c.py" "$O/logs/import.log" | head -1)
    if [[ $line == ok:* ]]; then imp=ok
    elif [[ $line == *"degenerate problem"* ]]; then
        row "$c" refused - - - "$(echo "$line" | sed 's/.*degenerate problem: //; s/ (spec written.*//')"
        return
    else
        row "$c" FAIL - - - "$(echo "$line" | cut -c1-160)"
        return
    fi
    # 2. plan + gates
    out=$O/run/$c
    log=$O/logs/$c.optimize.log
    timeout --kill-after=10 900 "$K" optimize "$spec" --device "$DEVICE" --rounds "${ROUNDS:-1}" \
        --per-round 1 --proposers parameter --db "$O/db/$c.db" --out "$out" > "$log" 2>&1
    rc=$?
    plan=FAIL; gates=FAIL; note=""
    grep -q 'synthesized one from the problem' "$log" && plan=ok
    fusion=$(sed -n 's/.*(fusion plan: \(.*\))$/\1/p' "$log" | head -1)
    gl=$(grep '^gates:' "$log" | head -1)
    if [ $rc -eq 0 ] && [ -n "$gl" ] && ! echo "$gl" | grep -q '(fail'; then gates=ok; fi
    [ "$plan" = ok ] || note="$(grep -m1 -E 'error|not expressible|kforge optimize:' "$log" | cut -c1-160)"
    [ "$gates" = ok ] || [ -n "$note" ] || note="rc=$rc ${gl:-$(grep -m1 -iE 'error|fail' "$log" | cut -c1-160)}"
    [ -z "$note" ] && note="$fusion"
    # 3. nvcc compile of the planned program (the start program, lineage #start)
    comp=-
    kf=$out/best.kf
    if [ -f "$kf" ]; then
        isgemm=0; grep -q '= gemm(' "$kf" && isgemm=1
        if [ $isgemm = 0 ] || [ "$COMPILE_GEMM" = all ] || [[ " $COMPILE_GEMM " == *" ${c%%_*} "* ]]; then
            if timeout --kill-after=10 900 "$K" compile "$kf" --problem "$spec" -o "$O/compile/$c" \
                > "$O/logs/$c.compile.log" 2>&1; then comp=ok; else comp=FAIL
                note="$note; compile: $(grep -m1 -E 'error' "$O/logs/$c.compile.log" | cut -c1-120)"
            fi
        elif echo "$gl" | grep -q 'compile(ok)'; then
            comp=gates  # compiled for the gates on the GPU
        else
            comp=skip
        fi
        grep -q 'lineage:' "$log" && ! grep -q '#[0-9]* start' "$log" && note="$note (best is not the start)"
        note="$note | $(grep -oE '= [a-z]+\(|schedule [a-z_]+|vec [0-9]+|passes [0-9]|split [0-9]+' "$kf" | tr -d '=(' | tr -s ' \n' ' ')"
    fi
    row "$c" "$imp" "$plan" "$gates" "$comp" "$note"
}
}
# 2-3 for each case, JOBS at a time (sim: 1 on a 2-core machine; cuda: 6, each its own store)
JOBS=${JOBS:-$([ "$DEVICE" = cuda ] && echo 6 || echo 1)}
mkdir -p "$O/db"
for c in "${cases[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
    one "$c" &
done
wait
for c in "${cases[@]}"; do cat "$O/lines/$c" >> "$T"; done
echo "table: $T"
