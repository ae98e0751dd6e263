#!/usr/bin/env bash
# Build and run the row-group prototype benchmark (kforge issue 4) on the GPU machine, from the
# repository root:   OUT=<dir> bash bench/kernels/rowgroup/run.sh    (or: bash ... run.sh <dir>)
# Writes $OUT/rowgroup/table.txt (the table, one line per variant, with the fp64 check column)
# and $OUT/rowgroup/build.txt (nvcc/ptxas output). About 1-2 minutes on the H200: one nvcc
# build (~10 s) and 7 shapes of ~11 variants, each 55 runs of at most ~1 ms plus a reference
# check. Exit status: the benchmark's (1 when any variant failed its check, timed out on its
# barrier or could not launch), 2 on a build failure.
set -uo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$R"
O=${1:-${OUT:-/tmp/kforge-out}}/rowgroup
mkdir -p "$O"
B=$(mktemp -d)
trap 'rm -rf "$B"' EXIT
if ! nvcc -O3 -arch=sm_90a -std=c++17 -I. -Xptxas -v bench/kernels/rowgroup/rowgroup_bench.cu \
        -o "$B/rowgroup_bench" > "$O/build.txt" 2>&1; then
    tail -30 "$O/build.txt"
    echo "build failed (see $O/build.txt)" >&2
    exit 2
fi
if grep -q "[1-9][0-9]* bytes spill" "$O/build.txt"; then
    echo "warning: register spills (see $O/build.txt)" >&2
fi
# A hung kernel cannot outlive 1 s of spinning per barrier; the outer limit is a last resort.
timeout 300 "$B/rowgroup_bench" 2>&1 | tee "$O/table.txt"
rc=${PIPESTATUS[0]}
echo "exit $rc; table in $O/table.txt"
exit "$rc"
