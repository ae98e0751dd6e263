#!/usr/bin/env bash
# GPU check of the row-wise templates (issue 4): the bandwidth benchmark with its correctness
# column, the fp64 self-test, and the full-tier kforge evaluation of the candidate programs in
# bench/kernels/rowwise_candidates/ (one .kf per config, PROBLEM.LABEL.kf) beside the suite's
# own problems/PROBLEM.kf, so the lead can pick the configs for problems/*.kf.
# One device call, from the repository root on the GPU machine (about 3-4 minutes):
#   bash bench/kernels/rowwise_check.sh [--no-eval] [--no-selftest]
#   --no-eval      only the benchmark and the self-test (no kforge binary needed)
#   --no-selftest  skip tests/kernels/gpu_selftest.cu
# environment: K (kforge binary; default .carry/bin/kforge, else build/*/cli/kforge; it must be
#   built from a tree with smem_stage and split 16, i.e. this commit or later)
#   OUT (/tmp/kforge-out; everything goes under $OUT/rows: bench1.txt (suite shapes),
#   bench2.txt (first-session shapes), selftest.txt, per-program JSON and stderr, summary.txt)
#   JOBS (8: parallel compiles)  DEVICE (cuda; sim runs the evaluation steps on the simulated
#   device: a smoke test of this script, every time SIMULATED)  EVAL_BUDGET_S (150: no new
#   evaluation starts after this many seconds of evaluating)
# Prints the benchmark tables and one line per evaluated program: problem, label, rc, status,
# median (us), message. Exit 1 when a benchmark check or the self-test failed.
set -uo pipefail
R=$(cd "$(dirname "$0")/../.." && pwd)
cd "$R"
. "$R/bench/lib/kforge_cases.sh"
eval_on=1; selftest=1
while [ $# -gt 0 ]; do
    case "$1" in
        --no-eval) eval_on=0 ;;
        --no-selftest) selftest=0 ;;
        -h|--help) sed -n 2,20p "$0"; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done
O=${OUT:-/tmp/kforge-out}/rows; mkdir -p "$O"
DEVICE=${DEVICE:-cuda}
NVCC="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I."
B=$(mktemp -d); trap 'rm -rf "$B"' EXIT
failed=0

if [ "$DEVICE" = cuda ]; then
    # The three nvcc builds in parallel (one translation unit each, ~10-60 s).
    $NVCC -DKFORGE_BENCH_PART=1 bench/kernels/rowwise_bench.cu -o "$B/bench1" > "$O/build1.txt" 2>&1 &
    p1=$!
    $NVCC -DKFORGE_BENCH_PART=2 bench/kernels/rowwise_bench.cu -o "$B/bench2" > "$O/build2.txt" 2>&1 &
    p2=$!
    if [ "$selftest" = 1 ]; then
        $NVCC tests/kernels/gpu_selftest.cu -o "$B/selftest" > "$O/build_selftest.txt" 2>&1 &
        p3=$!
    fi
    wait $p1 || { echo "bench part 1 did not build:"; cat "$O/build1.txt"; failed=1; }
    wait $p2 || { echo "bench part 2 did not build:"; cat "$O/build2.txt"; failed=1; }
    [ "$selftest" = 1 ] && { wait $p3 || { echo "self-test did not build:"; cat "$O/build_selftest.txt"; failed=1; }; }
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw,power.limit \
        --format=csv > "$O/gpu.txt" 2>&1
    for part in 1 2; do
        [ -x "$B/bench$part" ] || continue
        timeout 240 "$B/bench$part" > "$O/bench$part.txt" 2>&1
        echo "bench part $part rc=$?"; cat "$O/bench$part.txt"
        grep -q "FAIL" "$O/bench$part.txt" && failed=1
    done
    if [ "$selftest" = 1 ] && [ -x "$B/selftest" ]; then
        timeout 240 "$B/selftest" > "$O/selftest.txt" 2>&1
        rc=$?
        echo "selftest rc=$rc: $(tail -1 "$O/selftest.txt")"; grep "^FAIL" "$O/selftest.txt"
        [ $rc = 0 ] || failed=1
    fi
fi

if [ "$eval_on" = 1 ]; then
    kforge_default_binary "$R" || { echo "no kforge binary (set K)" >&2; exit 3; }
    export KFORGE_CACHE_DIR=${KFORGE_CACHE_DIR:-/tmp/kforge-cache}
    . "$R/bench/lib/link_build_tree.sh"
    kforge_link_build_tree "$K" "$R"
    # Cases: label|problem|program; the suite's program first for each problem.
    cases=()
    for prob in softmax_long_rows_f32 log_softmax_vocab_bf16 layer_norm_bf16 rms_norm_bf16; do
        cases+=("suite|$prob|problems/$prob.kf")
        for f in bench/kernels/rowwise_candidates/$prob.*.kf; do
            [ -e "$f" ] || continue
            label=${f##*/}; label=${label#"$prob".}; label=${label%.kf}
            cases+=("$label|$prob|$f")
        done
    done
    # Lower every program (kforge compile --no-build) so a refused one says why, then compile
    # them in parallel (the compile cache serves the evaluations), then evaluate one at a time.
    pre=()
    for c in "${cases[@]}"; do
        IFS='|' read -r label prob prog <<< "$c"
        pre+=("$prob.$label|problems/$prob.json|$prog")
    done
    kforge_precompile "$O" "$DEVICE" "${pre[@]}"
    : > "$O/summary.txt"
    start=$(date +%s)
    for c in "${cases[@]}"; do
        IFS='|' read -r label prob prog <<< "$c"
        if [ $(( $(date +%s) - start )) -gt "${EVAL_BUDGET_S:-150}" ]; then
            echo "$prob $label: skipped (evaluation budget ${EVAL_BUDGET_S:-150} s spent)" | tee -a "$O/summary.txt"
            continue
        fi
        s=$(date +%s)
        timeout 120 "$K" eval --device "$DEVICE" --tier full --problem "problems/$prob.json" \
            --program "$prog" --json > "$O/$prob.$label.json" 2> "$O/$prob.$label.err"
        rc=$?
        line=$(python3 bench/lib/eval_line.py "$O/$prob.$label.json" "$O/$prob.$label.err" 160)
        echo "$prob $label rc=$rc wall=$(( $(date +%s) - s ))s status/median_us/message: $line" |
            tee -a "$O/summary.txt"
    done
fi
exit $failed
