#!/usr/bin/env bash
# GPU check of `schedule multistage math f32_simt` (CUTLASS's sm80 SIMT GemmUniversal with its
# default epilogue, codegen/lower_gemm_sm80.cpp). Before the fix it went through the Sm80
# epilogue visitor tree, whose thread map is the tensor-op one, and wrote almost all zeros (H200
# 2026-12-02: 16377 of 16384 outputs wrong at N = 128). Cases, each at the full tier:
#   ms_simt        bench/kernels/fp32acc/ms_simt.kf on square_f32_2048.json (the failing program)
#   simt_odd       f32_simt on an f32 1000x999 @ 999x1001 matmul (rows not a multiple of 4 elements:
#                  scalar accesses, partial tiles at every edge)
#   ms_tf32x3      bench/kernels/fp32acc/ms_tf32x3.kf (the visitor-tree path, now with its
#                  thread-map static_assert; passed before the fix)
# One device call, from the repository root on the GPU machine:
#   OUT=DIR bash bench/kernels/fp32acc/simt_check.sh
# environment: K (kforge binary; default .carry/bin/kforge, else build/*/cli/kforge)
#   OUT (/tmp/kforge-out; results under $OUT/fp32acc_simt: per-case JSON and stderr, summary.txt)
#   DEVICE (cuda; sim runs the same steps on the simulated device: a smoke test of this script)
# Prints one line per case: name, rc, status, median (us), message. Exits 1 unless every case
# passed.
set -uo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$R"
. "$R/bench/lib/kforge_cases.sh"
kforge_bench_setup "$R"
D=bench/kernels/fp32acc
O=${OUT:-/tmp/kforge-out}/fp32acc_simt
mkdir -p "$O/compile"
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
export KFORGE_CACHE_DIR=${KFORGE_CACHE_DIR:-/tmp/kforge-cache}

cat > "$W/simt_odd.json" <<'EOF'
{"name": "simt_odd", "dims": {"M": 1000, "N": 1001, "K": 999},
 "inputs": {"A": {"shape": ["M", "K"], "dtype": "f32"}, "B": {"shape": ["K", "N"], "dtype": "f32"}},
 "graph": [{"op": "matmul", "inputs": ["A", "B"], "output": "C"}],
 "outputs": ["C"], "precision": {"policy": "fp32_strict"}}
EOF
cat > "$W/simt_odd.kf" <<'EOF'
program simt_odd for "simt_odd"
kernel k0 = gemm(A[M,K], B[K,N]) tile 128x128x16 cluster 1x1 stages 3 schedule multistage math f32_simt
    { store C[M,N] }
EOF
cases=("ms_simt|$D/square_f32_2048.json|$D/ms_simt.kf"
       "simt_odd|$W/simt_odd.json|$W/simt_odd.kf"
       "ms_tf32x3|$D/square_f32_2048.json|$D/ms_tf32x3.kf")
s=$(date +%s)
JOBS=${JOBS:-3} kforge_precompile "$O/compile" "$DEVICE" "${cases[@]}"
echo "compiled ${#cases[@]} programs in $(( $(date +%s) - s )) s" | tee "$O/summary.txt"
fail=0
for c in "${cases[@]}"; do
    IFS='|' read -r name prob prog <<< "$c"
    s=$(date +%s)
    timeout 300 "$K" eval --device "$DEVICE" --tier full --problem "$prob" --program "$prog" \
        --json > "$O/$name.json" 2> "$O/$name.err"
    rc=$?
    line=$(python3 bench/lib/eval_line.py "$O/$name.json" "$O/$name.err" 300)
    echo "$name rc=$rc wall=$(( $(date +%s) - s ))s status/median_us/message: $line" |
        tee -a "$O/summary.txt"
    [ "${line%% *}" = passed ] || fail=1
done
exit $fail
