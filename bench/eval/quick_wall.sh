#!/bin/sh
# Quick-tier wall time of already-compiled candidates inside one long-lived worker (CUDA context
# up, compile cache warm, fp64 references cached in the worker). Each problem's program is
# evaluated 4 times in ONE `kforge eval` session: the first pays the compile and the CPU
# references, the 3 later ones must each take < 300 ms wall (the kernels are under 1 ms).
# Usage: K=/path/to/kforge OUT=/path/to/outdir [CASES="row_sum_f32 ..."] bench/eval/quick_wall.sh
# (exit 1 if over)
set -u
root=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
: "${K:?set K to a kforge binary}"
: "${OUT:?set OUT to an output folder}"
mkdir -p "$OUT"
export KFORGE_CACHE_DIR="${KFORGE_CACHE_DIR:-/tmp/kforge-cache}"
. "$root/bench/lib/link_build_tree.sh"
kforge_link_build_tree "$K" "$root"
limit_ms=${LIMIT_MS:-300}
status=0
for case in ${CASES:-gemm_bf16_4096 row_sum_f32 gemm_f32_4096}; do
    prog="$root/tests/eval/data/$case.kf"
    log="$OUT/quick_wall_$case.txt"
    "$K" eval --device cuda --tier quick --problem "$root/problems/$case.json" \
        --program "$prog" --program "$prog" --program "$prog" --program "$prog" \
        --worker-log "$OUT/quick_wall_worker.log" >"$log" 2>&1
    rc=$?
    cat "$log"
    # "[i/n] label: status, wall X ms, ..." -> the warm ones (i >= 2)
    awk -v limit="$limit_ms" -v c="$case" '
        /^\[[0-9]+\/[0-9]+\]/ {
            split($1, idx, /[\[\/]/); i = idx[2] + 0
            match($0, /wall [0-9.]+ ms/); w = substr($0, RSTART + 5, RLENGTH - 8) + 0
            if (i == 1) { printf "%s: cold %.1f ms\n", c, w; next }
            n++; if (w > max) max = w
            if (w > limit) bad++
        }
        END {
            if (n == 0) { printf "%s: QUICK_WALL NO RESULT\n", c; exit 1 }
            printf "%s: warm max %.1f ms over %d evaluations (limit %d ms): %s\n", c, max, n,
                   limit, bad ? "OVER" : "ok"
            exit bad ? 1 : 0
        }' "$log" >"$OUT/quick_wall_$case.summary" || status=1
    cat "$OUT/quick_wall_$case.summary" | tee -a "$OUT/quick_wall_summary.txt"
    [ "$rc" -eq 0 ] || { echo "$case: kforge eval exit $rc" | tee -a "$OUT/quick_wall_summary.txt"; status=1; }
done
exit $status
