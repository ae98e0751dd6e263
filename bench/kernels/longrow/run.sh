#!/usr/bin/env bash
# Long-row row-wise designs (kforge issue 4; README.md in this folder). One device call on the
# H200, from the repository root:
#   OUT=$OUT bash bench/kernels/longrow/run.sh [all|softmax|group_norm]
# Writes $OUT/longrow/table.txt (one line per variant with its fp64 check and occupancy, then a
# summary of the best of each family against 85% of copy), build.txt (nvcc -Xptxas -v),
# regs.txt (registers / spills per kernel) and gpu.txt (clocks). About 1 minute: the build
# (~30 s) and ~45 variants of 46 launches of ~0.3-0.5 ms each, each with a reference check.
# Exit: 0 all checks passed, 1 a variant FAILed (wrong result, spin-wait timeout, could not
# run), 2 build failure, 3 no GPU / CUDA error.
set -uo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$R"
O=${OUT:-/tmp/kforge-out}/longrow
mkdir -p "$O"
B=$(mktemp -d)
trap 'rm -rf "$B"' EXIT
NVCC=${NVCC:-nvcc}
if ! "$NVCC" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I. -Xptxas -v \
        bench/kernels/longrow/longrow_bench.cu -o "$B/longrow_bench" > "$O/build.txt" 2>&1; then
    grep -m 20 error "$O/build.txt" >&2
    echo "build failed (see $O/build.txt)" >&2
    exit 2
fi
# registers and spills per timed kernel (ptxas prints properties before "Used N registers")
awk '/Compiling entry function/ {f = $0; s = ""} /spill stores/ && !/ 0 bytes spill stores, 0 bytes spill loads/ {s = " SPILL " $0}
     /Used [0-9]+ registers/ && f !~ /reference|k_fill|bfloat/ {match($0, /Used [0-9]+ registers/); print substr($0, RSTART, RLENGTH) s "  " f}' \
    "$O/build.txt" | sed -E "s/ptxas info +: Compiling entry function //" > "$O/regs.mangled"
if command -v c++filt > /dev/null; then c++filt < "$O/regs.mangled" > "$O/regs.txt"; else cp "$O/regs.mangled" "$O/regs.txt"; fi
rm -f "$O/regs.mangled"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv > "$O/gpu.txt" 2>&1 || true
timeout 150 "$B/longrow_bench" "$@" 2>&1 | tee "$O/table.txt"
rc=${PIPESTATUS[0]}
[ "$rc" = 124 ] && echo "timed out after 150 s" | tee -a "$O/table.txt"
if grep -q "FAIL" "$O/table.txt" && [ "$rc" = 0 ]; then rc=1; fi
echo "exit $rc; table in $O/table.txt"
exit "$rc"
