#!/usr/bin/env bash
# bench/network/kernel_breakdown.sh: issue 26's per-kernel breakdown on the GPU, in one device
# call (about 4-7 minutes on an H100/H200, mostly nvcc compiles of the GEMMs):
#   1. kforge eval --tier full --device cuda --isolate --json of each multi-kernel suite program
#      (problems/<name>.kf: a gemm + row-wise softmax, two gemms, a tf32x3 gemm + row sum, a gemm
#      + logsumexp) through the supervised worker: the timing gate's whole-program samples, then
#      the CUDA device's per-kernel pass (device/cuda_device_time.cpp: an event before every
#      launch, min(10, samples) iterations, the median per kernel) -> kernel_times_ns
#   2. kforge optimize --device cuda --rounds 1 of problems/linear_softmax_bf16 (the search's
#      path: its best's breakdown, the net-budget groups' shares in optimize.log) and of each
#      KernelBench-format network in NETWORKS (default 80_resnet_basic_blocks, imported with
#      torch: conv2d kernels of four launches each; NETWORKS= skips them)
#   3. kforge report over every run: the per-kernel table and chart (report.md, report.html,
#      kernels_run*_problem*.svg, report.json)
#   4. bench/network/kernel_breakdown.py: per program the whole-program median, the sum of the
#      kernels' medians and their ratio, and each kernel's time, share and %SOL of its own bound;
#      $OUT/kernel_breakdown/summary.md
# Here:        bash bench/lib/make_carry.sh build/ci   (then carry .carry)
# GPU machine: bash bench/network/kernel_breakdown.sh   (DEVICE=sim: a dry run of the same steps)
# PROBLEMS overrides the list (suite names, space-separated).
set -uo pipefail
R=$PWD
K=${KFORGE:-$R/.carry/bin/kforge}
DEVICE=${DEVICE:-cuda}
[ -x "$K" ] || { echo "kernel_breakdown.sh: $K missing (bash bench/lib/make_carry.sh first)"; exit 3; }
if [ -e "$R/bench/lib/link_build_tree.sh" ] && [ -d "$R/.carry" ]; then
    . "$R/bench/lib/link_build_tree.sh"
    kforge_link_build_tree "$K" "$R"
fi
export KFORGE_CACHE_DIR=${KFORGE_CACHE_DIR:-/tmp/kforge-cache} KFORGE_HOME=$R
O=${OUT:-/tmp/kforge-out}/kernel_breakdown
rm -rf "$O" && mkdir -p "$O/eval" "$O/specs"
: > "$O/steps.txt"
. "$R/bench/lib/step.sh"
DB=$O/k.db
PROBLEMS=${PROBLEMS:-linear_softmax_bf16 swiglu_bf16 matmul_rowsum_f32 linear_logsumexp_bf16}

for p in $PROBLEMS; do
    cp "$R/problems/$p.json" "$R/problems/$p.kf" "$O/specs/"
    step "eval_$p" 240 sh -c 'exec "$@" > "$0" 2> "$0.log"' "$O/eval/$p.json" \
        "$K" eval "$O/specs/$p.json" --program "$O/specs/$p.kf" --tier full \
        --device "$DEVICE" --isolate --db "$DB" --json
done
step optimize 240 sh -c 'exec "$@" > "$0" 2>&1' "$O/optimize.log" \
    "$K" optimize "$O/specs/linear_softmax_bf16.json" --device "$DEVICE" --rounds 1 \
    --budget-compiles 2 --profile-top 0 --db "$DB" --out "$O/optimize"
# KernelBench-format networks (examples/kernelbench; the import needs torch): the planner's
# start program, its conv2d kernels four launches each (one row each in the breakdown)
if [ -n "${NETWORKS-80_resnet_basic_blocks}" ]; then
    export KFORGE_PYTHON=${KFORGE_PYTHON:-python3} PYTHONPATH="$R/python${PYTHONPATH:+:$PYTHONPATH}"
    for n in ${NETWORKS-80_resnet_basic_blocks}; do
        step "import_$n" 120 sh -c 'exec "$@" > "$0" 2>&1' "$O/import_$n.log" \
            "$K" import kernelbench "$R/examples/kernelbench/$n.py" -o "$O/specs" || continue
        step "optimize_$n" 240 sh -c 'exec "$@" > "$0" 2>&1' "$O/optimize_$n.log" \
            "$K" optimize "$O/specs/kb_$n.json" --device "$DEVICE" --rounds 1 \
            --budget-compiles 1 --profile-top 0 --db "$DB" --out "$O/optimize_$n"
    done
fi
runs=$(python3 -c "import sqlite3,sys; print(' '.join(str(r[0]) for r in
    sqlite3.connect(sys.argv[1]).execute('select id from runs order by id')))" "$DB")
# shellcheck disable=SC2086
step report 120 "$K" report $runs --db "$DB" -o "$O/report"
python3 "$R/bench/network/kernel_breakdown.py" "$O" | tee "$O/summary.md"
