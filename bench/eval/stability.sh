#!/bin/sh
# Timing stability in one session: 10 full-tier timings (10 warm-up + 100 iterations, L2 flushed
# before every iteration, CUDA events) of one program in ONE worker, the median of each and
# their spread (max - min) / min, which should stay within 1%; then two tilings of the bf16
# GEMM timed interleaved (A B A B chunks of 10) with NVML clocks and throttle reasons per sample.
# Usage: K=/path/to/kforge OUT=/path/to/outdir bench/eval/stability.sh  (exit 1 if a spread > 1%)
set -u
root=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
: "${K:?set K to a kforge binary}"
: "${OUT:?set OUT to an output folder}"
mkdir -p "$OUT"
export KFORGE_CACHE_DIR="${KFORGE_CACHE_DIR:-/tmp/kforge-cache}"
. "$root/bench/lib/link_build_tree.sh"
kforge_link_build_tree "$K" "$root"
reps=${REPEAT:-10}
status=0
for case in gemm_bf16_4096 row_sum_f32; do
    "$K" eval --device cuda --tier full --problem "$root/problems/$case.json" \
        --program "$root/tests/eval/data/$case.kf" --repeat "$reps" \
        --worker-log "$OUT/stability_worker.log" >"$OUT/stability_$case.txt" 2>&1 || status=1
    cat "$OUT/stability_$case.txt"
    grep -q "(within 1%)" "$OUT/stability_$case.txt" || status=1
done
"$K" eval --device cuda --tier full --problem "$root/problems/gemm_bf16_4096.json" \
    --program "$root/tests/eval/data/gemm_bf16_4096.kf" \
    --program "$root/bench/eval/gemm_bf16_4096_t128x256.kf" --interleave --repeat 3 --json \
    --worker-log "$OUT/stability_worker.log" >"$OUT/interleave_gemm_bf16_4096.json" \
    2>"$OUT/interleave_gemm_bf16_4096.err" || status=1
"$K" eval --device cuda --tier quick --problem "$root/problems/gemm_bf16_4096.json" \
    --program "$root/tests/eval/data/gemm_bf16_4096.kf" \
    --program "$root/bench/eval/gemm_bf16_4096_t128x256.kf" --interleave \
    --worker-log "$OUT/stability_worker.log" | tee "$OUT/interleave_gemm_bf16_4096.txt" || status=1
exit $status
