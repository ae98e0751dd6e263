#!/usr/bin/env bash
# GPU check of the sm90 tf32 lowering of an N-major B (staged K-major by a pre-kernel, see
# codegen/gemm_stage.h): correctness gates and the full-tier median of
# problems/gemm_tf32_4096.kf, plus (default on) a small problem whose epilogue has a bias along N,
# a column along M and a residual matrix.
# One device call, from the repository root on the GPU machine:
#   bash bench/kernels/tf32_check.sh [--variants] [--large-k] [--no-epilogue]
#   --variants     also evaluate three other sm90 configurations of gemm_tf32_4096 (pingpong,
#                  cluster 1x1, tile 128x256x32) to pick the fastest for problems/*.kf
#   --large-k      also evaluate problems/gemm_large_k_bf16.kf (split-K) at the full tier
#   --no-epilogue  skip the broadcast/residual epilogue case
# environment: K (kforge binary; default .carry/bin/kforge, else build/*/cli/kforge)
#   OUT (/tmp/kforge-out: per-case JSON and stderr, summary.txt)  JOBS (8: parallel compiles)
#   DEVICE (cuda; sim runs the same steps on the simulated device: a smoke test of this script,
#   every time SIMULATED)
# Prints one line per case: name, rc, status, median (us), message. Exit 1 when the main case
# (gemm_tf32_4096) did not pass.
set -uo pipefail
R=$(cd "$(dirname "$0")/../.." && pwd)
cd "$R"
variants=0; large_k=0; epilogue=1
while [ $# -gt 0 ]; do
    case "$1" in
        --variants) variants=1 ;;
        --large-k) large_k=1 ;;
        --no-epilogue) epilogue=0 ;;
        -h|--help) sed -n 2,15p "$0"; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done
. "$R/bench/lib/kforge_cases.sh"
kforge_default_binary "$R" || { echo "no kforge binary (set K)" >&2; exit 3; }
O=${OUT:-/tmp/kforge-out}; mkdir -p "$O"
DEVICE=${DEVICE:-cuda}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
export KFORGE_CACHE_DIR=${KFORGE_CACHE_DIR:-/tmp/kforge-cache}
. "$R/bench/lib/link_build_tree.sh"
kforge_link_build_tree "$K" "$R"

# Cases: name|problem json|program|tier
cases=("gemm_tf32_4096|problems/gemm_tf32_4096.json|problems/gemm_tf32_4096.kf|full")

variant() {  # variant NAME KNOBS: gemm_tf32_4096 with other knobs
    printf 'program gemm_tf32_4096 for "gemm_tf32_4096"\nkernel k0 = gemm(A[M,K], B[K,N]) %s\n    { store C[M,N] }\n' \
        "$2" > "$W/$1.kf"
    cases+=("$1|problems/gemm_tf32_4096.json|$W/$1.kf|full")
}
if [ "$variants" = 1 ]; then
    variant tf32_pingpong_128x128 "tile 128x128x32 cluster 2x1 stages auto schedule pingpong math tf32 raster along_n swizzle 8"
    variant tf32_coop_cluster1x1 "tile 128x128x32 cluster 1x1 stages auto schedule cooperative math tf32 raster along_n swizzle 8"
    variant tf32_coop_128x256 "tile 128x256x32 cluster 2x1 stages auto schedule cooperative math tf32 raster along_n swizzle 8"
fi
if [ "$epilogue" = 1 ]; then
    cat > "$W/tf32_nn_epilogue.json" <<'EOF'
{"name": "tf32_nn_epilogue", "dims": {"M": 1024, "N": 2048, "K": 1024},
 "inputs": {"A": {"shape": ["M", "K"], "dtype": "f32"}, "B": {"shape": ["K", "N"], "dtype": "f32"},
            "b": {"shape": ["N"], "dtype": "f32"}, "c": {"shape": ["M", 1], "dtype": "f32"},
            "R": {"shape": ["M", "N"], "dtype": "f32"}},
 "graph": [{"op": "matmul", "inputs": ["A", "B"], "output": "H"},
           {"op": "add", "inputs": ["H", "b"], "output": "S"},
           {"op": "sub", "inputs": ["S", "c"], "output": "T"},
           {"op": "add", "inputs": ["T", "R"], "output": "Y"}],
 "outputs": ["Y"], "precision": {"policy": "tf32", "atol": 0.05, "rtol": 0.005}}
EOF
    cat > "$W/tf32_nn_epilogue.kf" <<'EOF'
program tf32_nn_epilogue for "tf32_nn_epilogue"
kernel k0 = gemm(A[M,K], B[K,N]) tile 128x64x32 cluster 2x1 schedule pingpong math tf32
    { add b[N]; sub c[M,1]; add R[M,N]; store Y[M,N] }
EOF
    cases+=("tf32_nn_epilogue|$W/tf32_nn_epilogue.json|$W/tf32_nn_epilogue.kf|quick")
fi
if [ "$large_k" = 1 ]; then
    cases+=("gemm_large_k_bf16|problems/gemm_large_k_bf16.json|problems/gemm_large_k_bf16.kf|full")
fi

# Check and lower every program first (kforge compile --no-build: kernels.cu and plan.json under
# $OUT/NAME.lowered), then compile them in parallel (the compile cache serves the evaluations),
# then evaluate one at a time.
for c in "${cases[@]}"; do
    IFS='|' read -r name prob prog tier <<< "$c"
    "$K" compile "$prog" --problem "$prob" -o "$O/$name.lowered" --no-build \
        > "$O/$name.lower.txt" 2>&1 ||
        { echo "$name: kforge compile --no-build failed:"; cat "$O/$name.lower.txt"; }
done
printf '%s\n' "${cases[@]}" | xargs -d '\n' -n 1 -P "${JOBS:-8}" bash -c '
    IFS="|" read -r name prob prog tier <<< "$3"
    "$0" eval --device "$2" --tier compile --problem "$prob" --program "$prog" --json \
        > "$1/$name.compile.json" 2>&1' "$K" "$O" "$DEVICE"

: > "$O/summary.txt"
main_status=""
for c in "${cases[@]}"; do
    IFS='|' read -r name prob prog tier <<< "$c"
    s=$(date +%s)
    timeout 300 "$K" eval --device "$DEVICE" --tier "$tier" --problem "$prob" --program "$prog" --json \
        > "$O/$name.json" 2> "$O/$name.err"
    rc=$?
    line=$(python3 bench/lib/eval_line.py "$O/$name.json" "$O/$name.err" 200)
    echo "$name tier=$tier rc=$rc wall=$(( $(date +%s) - s ))s status/median_us/message: $line" |
        tee -a "$O/summary.txt"
    [ "$name" = gemm_tf32_4096 ] && main_status=${line%% *}
done
[ "$main_status" = passed ]
