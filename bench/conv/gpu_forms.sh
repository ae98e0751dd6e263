#!/usr/bin/env bash
# Issue 24's grouped, depthwise and transposed convolutions on the GPU: the carried
# test_codegen_conv_gpu (tests/codegen/conv_gpu_test.cpp; the Forms/ConvFormsGpu cases: each the
# planner's seed of one form - depthwise on CUTLASS's direct convolution, grouped on its group
# fprop, transposed on its dgrad with strides, paddings, dilations, output_paddings, zero
# insertion and block-diagonal groups - plus knob variants, through every gate against the GPU
# fp64 reference; the three conv2d cases too) in SHARDS parallel gtest shards, since each case is
# one nvcc compile of a CUTLASS kernel (about a minute) and the cases are independent.
#   bash bench/lib/make_carry.sh build/release          (here: .carry with the test binary)
#   OUT=DIR bash bench/conv/gpu_forms.sh                (on the GPU machine, from the repo root)
# environment: SHARDS (8), FILTER (gtest filter, default every case), KFORGE_CACHE_DIR.
# Results under $OUT/conv_forms: shard_<i>.txt (gtest output), summary.txt (one line per case:
#   OK, FAILED or SKIPPED, and the count).
set -uo pipefail
R=$PWD
O=${OUT:-/tmp/kforge-out}/conv_forms
mkdir -p "$O"
SHARDS=${SHARDS:-8}
T="$R/.carry/bin/test_codegen_conv_gpu"
[ -x "$T" ] || { echo "no $T: run bench/lib/make_carry.sh first" >&2; exit 3; }
. "$R/bench/lib/link_build_tree.sh"
kforge_link_build_tree "$R/.carry/bin/kforge" "$R"
# the evaluator's worker and compile paths follow the build tree the test was built in
for b in build/ci build/release; do mkdir -p "$R/$b/cli" && ln -sf "$R/.carry/bin/kforge" "$R/$b/cli/kforge"; done
export KFORGE_CACHE_DIR=${KFORGE_CACHE_DIR:-/tmp/kforge-cache}
s=$SECONDS
for i in $(seq 0 $((SHARDS - 1))); do
    GTEST_TOTAL_SHARDS=$SHARDS GTEST_SHARD_INDEX=$i LD_LIBRARY_PATH="$R/.carry/lib" \
        timeout 560 "$T" --gtest_filter="${FILTER:-*}" > "$O/shard_$i.txt" 2>&1 &
done
wait
grep -hE '^\[ +(OK|FAILED|SKIPPED) +\] [A-Za-z/_0-9.]+' "$O"/shard_*.txt | grep -v ' tests\?, ' |
    sed 's/ ([0-9]* ms)$//' | sort -u > "$O/summary.txt"
echo "ok $(grep -c '\[ *OK' "$O/summary.txt"), failed $(grep -c 'FAILED' "$O/summary.txt"), skipped $(grep -c 'SKIPPED' "$O/summary.txt"); wall_s=$((SECONDS - s))" |
    tee -a "$O/summary.txt"
