#!/usr/bin/env bash
# Prefix scans (cumsum / cumprod, kernels/scan.cuh) on the GPU, one command:
#   1. the template's self-test against an fp64 CPU scan (tests/kernels/scan_selftest.cu:
#      forward / reverse, inclusive / exclusive, whole-block and warp row groups, f32/bf16/f16);
#   2. per spec here (KernelBench level 1 problems 89-91 at [128, 4000], long rows [128, 32768],
#      and [4096, 32768] for bandwidth) the full tier (correctness against the CPU and GPU fp64
#      references, audit, cold-L2 timing) of two programs, timed interleaved in one session:
#        kforge eval --tier full --interleave --problem NAME.json --program NAME.wide.kf --program NAME.narrow.kf
#      wide: 1024 threads a row (the seed's choice for few rows), narrow: 256 (its choice since
#      2026-12-02 when 256-thread rows fill every SM, e.g. 4096 rows).
# One line per program: problem, plan, status, full-tier median, interleaved median, GB/s.
#   bash bench/kernels/scan/run.sh [OUT]       (about 3-5 minutes)
# environment: K (kforge; default .carry/bin/kforge, else build/*/cli/kforge), OUT (or $1;
#   default /tmp/kforge-out; results under OUT/scan: selftest.txt, NAME.json, NAME.err,
#   summary.txt), DEVICE (cuda; sim: a smoke test of the eval part), NVCC.
# Exit 1 when the self-test or an evaluation failed, 2 on bad arguments or no binary.
set -uo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$R"
case "${1:-}" in -h|--help) sed -n 2,17p "$0"; exit 0 ;; esac
OUT=${1:-${OUT:-/tmp/kforge-out}}
. "$R/bench/lib/kforge_cases.sh"
kforge_bench_setup "$R"
O=$OUT/scan
mkdir -p "$O"
export KFORGE_CACHE_DIR=${KFORGE_CACHE_DIR:-/tmp/kforge-cache}
failed=0
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if [ "$DEVICE" = cuda ]; then
    "$NVCC" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I. \
        tests/kernels/scan_selftest.cu -o "$O/scan_selftest" > "$O/selftest.txt" 2>&1 &&
        "$O/scan_selftest" >> "$O/selftest.txt" 2>&1
    rc=$?
    tail -1 "$O/selftest.txt" | sed 's/^/selftest: /' | tee "$O/summary.txt"
    grep '^FAIL' "$O/selftest.txt" | head -5
    [ $rc -eq 0 ] || failed=1
else
    : > "$O/summary.txt"
fi
D=bench/kernels/scan
for n in cumsum_128x4000 cumprod_128x4000 cumsum_reverse_128x4000 cumsum_128x32768 \
         cumsum_4096x32768; do
    timeout 500 "$K" eval --device "$DEVICE" --tier full --interleave --problem "$D/$n.json" \
        --program "$D/$n.wide.kf" --program "$D/$n.narrow.kf" --json > "$O/$n.json" 2> "$O/$n.err"
    rc=$?
    python3 "$R/bench/lib/interleaved_table.py" "$O/$n.json" "$n" "$rc" |
        tee -a "$O/summary.txt" || failed=1
done
exit $failed
