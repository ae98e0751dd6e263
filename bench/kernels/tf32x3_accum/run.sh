#!/usr/bin/env bash
# Issue 4 decision benchmark (README.md in this folder): staged 3xTF32 on Hopper wgmma, with and
# without accumulator promotion, against cuBLAS SGEMM / TF32 at 4096^3. One device call, from
# the repository root on the H200:
#   OUT=$OUT bash bench/kernels/tf32x3_accum/run.sh          -> $OUT/tf32x3/table.txt
# On a machine without a GPU: bash bench/kernels/tf32x3_accum/run.sh --dry  (compiles, checks
# for register spills, runs the host accumulation model and CUTLASS can_implement for every
# variant).
# Extra arguments go to the binary (--m/--n/--k, --iters, --warmup). environment: OUT
# (/tmp/kforge-out), BUILD (build/tf32x3_accum), NVCC (nvcc).
# Exit: 0 ok, 1 a variant failed or a GEMM kernel spills, 2 usage, 3 missing toolchain/headers.
set -euo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$R"
case "${1:-}" in -h|--help) sed -n 2,12p "$0"; exit 0 ;; esac
CI=.venv/lib/python3.11/site-packages/cutlass_library/source
[ -f "$CI/include/cutlass/gemm/collective/fp8_accumulation.hpp" ] ||
    { echo "CUTLASS headers missing under $CI/include" >&2; exit 3; }
[ -d "$CI/tools/util/include/cutlass/util" ] || { echo "CUTLASS util headers missing" >&2; exit 3; }
NVCC=${NVCC:-nvcc}
command -v "$NVCC" >/dev/null || { echo "no nvcc (set NVCC)" >&2; exit 3; }
O=${OUT:-/tmp/kforge-out}/tf32x3
B=${BUILD:-build/tf32x3_accum}
mkdir -p "$O" "$B"
S=bench/kernels/tf32x3_accum
F=(-std=c++17 -O3 -DNDEBUG --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a
   -I. -I"$S" -I"$CI/include" -I"$CI/tools/util/include" -Xptxas -v)

t0=$(date +%s)
pids=()
for tu in main gemm_plain gemm_promo; do
    "$NVCC" "${F[@]}" -c "$S/$tu.cu" -o "$B/$tu.o" > "$O/build_$tu.log" 2>&1 &
    pids+=($!)
done
rc=0
for i in "${!pids[@]}"; do wait "${pids[$i]}" || rc=1; done
if [ $rc -ne 0 ]; then
    grep -h -m 20 "error" "$O"/build_*.log >&2 || true
    echo "compile failed (logs: $O/build_*.log)" >&2
    exit 1
fi
"$NVCC" -arch=sm_90a "$B/main.o" "$B/gemm_plain.o" "$B/gemm_promo.o" -lcublas -lcuda \
    -o "$B/tf32x3_accum" > "$O/build_link.log" 2>&1 ||
    { cat "$O/build_link.log" >&2; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"

# No spills in the GEMM kernels (ptxas -v of both CUTLASS translation units).
spills=$(grep -h "spill stores" "$O/build_gemm_plain.log" "$O/build_gemm_promo.log" |
         grep -v " 0 bytes spill stores, 0 bytes spill loads" || true)
nk=$(cat "$O/build_gemm_plain.log" "$O/build_gemm_promo.log" | grep -c "spill stores" || true)
if [ -n "$spills" ]; then
    echo "register spills in a GEMM kernel:" >&2
    echo "$spills" >&2
    exit 1
fi
echo "ptxas: $nk GEMM-TU functions, no spills"

# Host model of the accumulation (emulate.cpp, a few seconds): predictions next to the table.
CXX=${CXX:-g++}
if command -v "$CXX" >/dev/null &&
    "$CXX" -std=c++17 -O2 -I. "$S/emulate.cpp" -o "$B/emulate" 2> "$O/build_emulate.log"; then
    "$B/emulate" > "$O/emulate.txt" || { cat "$O/emulate.txt" >&2; exit 1; }
    echo "host accumulation model: $O/emulate.txt"
else
    echo "emulate.cpp not built (no $CXX?), skipped" >&2
fi

if [ "${1:-}" = "--dry" ]; then
    "$B/tf32x3_accum" "$@"
    exit $?
fi
command -v nvidia-smi >/dev/null &&
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit \
        --format=csv > "$O/gpu.txt" 2>&1 || true
set +e
timeout 200 "$B/tf32x3_accum" --out "$O/table.txt" "$@" 2> "$O/stderr.txt"
rc=$?
set -e
cat "$O/stderr.txt" >&2
[ $rc -eq 124 ] && echo "timed out after 200 s" >&2
echo "table: $O/table.txt (exit $rc)"
exit $rc
