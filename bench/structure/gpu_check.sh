#!/usr/bin/env bash
# One device call that checks a restructured tree on the GPU (issue 22: behaviour unchanged;
# issue 31: the fault suite still 9/9): every carried GPU test binary, then bench/gpu_run.sh's
# compile (every suite program through the evaluator), quick (gated quick-tier evaluation of every
# suite problem) and faults (the fault suite in one supervisor session). Everything under $OUT is
# packed into $OUT/results.tgz (a device call returns at most 8 files).
#   PACK=1 bash bench/lib/make_carry.sh build/ci      (here)
#   tar xJf .carry.tar.xz && bash bench/structure/gpu_check.sh   (on the GPU machine, carry .carry.tar.xz)
set -uo pipefail
R=$PWD
O=${OUT:-/tmp/kforge-out}; mkdir -p "$O/res"
. "$R/bench/lib/link_build_tree.sh"
kforge_link_build_tree "$R/.carry/bin/kforge" "$R"
# GPU tests that start a worker run the CLI of the build tree they were built in
# (<build>/cli/kforge): point that path at the carried binary.
for b in build/ci build/release; do mkdir -p "$R/$b/cli" && ln -sf "$R/.carry/bin/kforge" "$R/$b/cli/kforge"; done
export KFORGE_CACHE_DIR=/tmp/kforge-cache
for t in "$R"/.carry/bin/test_*; do
    n=$(basename "$t")
    LD_LIBRARY_PATH="$R/.carry/lib" timeout 300 "$t" > "$O/res/$n.txt" 2>&1
    echo "$n rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$O/res/$n.txt" | tr '\n' ' ')"
done | tee "$O/res/gpu_tests.txt"
OUT="$O/res" bash "$R/bench/gpu_run.sh" ${PHASES:-compile quick faults}
(cd "$O" && tar czf results.tgz res && rm -rf res)
