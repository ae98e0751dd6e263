#!/usr/bin/env bash
# Slice views on the GPU (d7d10e3): KernelBench level 3, 43 (MinGPT causal attention) with the
# planner's start program of this checkout - q, k, v each one permute copy read straight from the
# projection through its slice (problem/copy_op.h view_layout) - against the same program with
# the slices stored first (programs/kb_43_slice_copies.kf: the start program before d7d10e3, 7
# copy kernels instead of 4), both through every gate and timed at the full tier in one run.
# Predicted (bench/NOTES.md, session 25): the view program 6-8% faster (3 x 402 MB of slice
# traffic gone; simulated 4265 -> 3973 us).
#
# usage: OUT=DIR bash bench/kernelbench/slice_views_gpu.sh KERNELBENCH_LEVELS_DIR
#   KERNELBENCH_LEVELS_DIR: the folder holding level3/ of a KernelBench checkout
# environment: KFORGE (.carry/bin/kforge), KFORGE_PYTHON (python with torch, for the import),
#   DEVICE (cuda; sim for a dry run: no compile, the simulator's gates and modelled times)
# Results under $OUT/slice_views: spec, programs, eval/<name>.txt, steps.txt, summary.txt.
set -uo pipefail
R=$PWD
KB=${1:?usage: OUT=DIR bash bench/kernelbench/slice_views_gpu.sh KERNELBENCH_LEVELS_DIR}
K=${KFORGE:-$R/.carry/bin/kforge}
O=${OUT:-/tmp/kforge-out}/slice_views
mkdir -p "$O/specs" "$O/eval"
: > "$O/steps.txt"
. "$R/bench/lib/step.sh"
f=$KB/level3/43_MinGPTCausalAttention.py
[ -f "$f" ] || { echo "no $f (give the folder holding level3/)" >&2; exit 2; }
step import 120 "$K" import kernelbench "$f" -o "$O/specs" || exit 1
spec=$O/specs/kb_43_MinGPTCausalAttention.json
step plan 120 sh -c 'exec "$@" > "$0" 2>&1' "$O/plan.log" \
    "$K" optimize "$spec" --device sim --rounds 0 --db "$O/plan.db"
python3 - "$O/plan.db" > "$O/views.kf" <<'PY'
import sqlite3, sys
row = sqlite3.connect(sys.argv[1]).execute(
    "select program_text from candidates order by id desc limit 1").fetchone()
print(row[0] if row else "", end="")
PY
cp "$R/bench/kernelbench/programs/kb_43_slice_copies.kf" "$O/copies.kf"
[ -s "$O/views.kf" ] || { echo "no start program (plan.log)" >&2; exit 1; }
if [ "${DEVICE:-cuda}" = cuda ]; then  # the CUTLASS compiles at once (shared gemm, attention)
    for p in views copies; do
        "$K" compile "$spec" "$O/$p.kf" -o "$O/build_$p" > "$O/compile_$p.log" 2>&1 &
    done
    wait
fi
for p in views copies; do
    step "eval_$p" 300 sh -c 'exec "$@" > "$0" 2>&1' "$O/eval/$p.txt" \
        "$K" eval "$spec" --program "$O/$p.kf" --tier full --device "${DEVICE:-cuda}"
done
{
    for p in views copies; do
        echo "$p: $(grep -c '^kernel' "$O/$p.kf") kernels, $(grep -E '^verdict' "$O/eval/$p.txt")," \
             "$(grep -E '^time:' "$O/eval/$p.txt" | cut -c1-60)"
    done
} | tee "$O/summary.txt"
