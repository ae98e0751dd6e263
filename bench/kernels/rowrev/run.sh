#!/usr/bin/env bash
# Forward against alternating sweep directions of the streamed row-wise templates (RowCfg
# SWEEP_ALTERNATE; kforge issue 4), on the GPU machine, from the repository root:
#   bash bench/kernels/rowrev/run.sh [OUT]      (OUT defaults to $OUT, else /tmp/kforge-out)
# Writes $OUT/rowrev/table.txt (one line per variant with its fp64 check, then a forward/alternating
# summary), $OUT/rowrev/build.txt (nvcc and ptxas -v output), $OUT/rowrev/gpu.txt (clocks) and
# $OUT/rowrev/selftest.txt (tests/kernels/gpu_selftest.cu, which has the alternating-sweep cases).
# About 2-3 minutes on the H200: two nvcc builds in parallel (~1 min) and 30 variants of 55 runs
# of at most ~1 ms, each with a reference check, then the self-test (~30 s). Exit status: 1 when
# a check or the self-test failed or a variant could not launch, 2 on a build failure.
set -uo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$R"
O=${1:-${OUT:-/tmp/kforge-out}}/rowrev
mkdir -p "$O"
B=$(mktemp -d)
trap 'rm -rf "$B"' EXIT
NVCC="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I."
$NVCC tests/kernels/gpu_selftest.cu -o "$B/selftest" > "$O/build_selftest.txt" 2>&1 &
st_pid=$!
if ! $NVCC -Xptxas -v bench/kernels/rowrev/rowrev_bench.cu -o "$B/rowrev_bench" > "$O/build.txt" 2>&1; then
    tail -30 "$O/build.txt"
    echo "build failed (see $O/build.txt)" >&2
    exit 2
fi
# Spills in the timed kernels (the fp64 reference-check kernel spills 8 bytes; it is not timed).
spills=$(awk "/Compiling entry function/ {f = \$0} /[1-9][0-9]* bytes spill stores/ && f !~ /k_reference_check/ {print f}" "$O/build.txt")
[ -n "$spills" ] && echo "warning: register spills in: $spills" >&2
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv > "$O/gpu.txt" 2>&1
timeout 400 "$B/rowrev_bench" 2>&1 | tee "$O/table.txt"
rc=${PIPESTATUS[0]}
if grep -q "FAIL" "$O/table.txt"; then
    echo "a variant failed its fp64 check" >&2
    rc=1
fi
if wait $st_pid; then
    timeout 240 "$B/selftest" > "$O/selftest.txt" 2>&1
    st=$?
    echo "self-test rc=$st: $(tail -1 "$O/selftest.txt")"; grep "^FAIL" "$O/selftest.txt"
    [ $st = 0 ] || rc=1
else
    echo "self-test did not build:"; tail -20 "$O/build_selftest.txt"; rc=1
fi
echo "exit $rc; table in $O/table.txt"
exit "$rc"
