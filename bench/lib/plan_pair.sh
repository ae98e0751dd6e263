# Sourced by the GPU scripts that compare a split plan with a one-kernel plan of the same problem
# (bench/kernels/letval, bench/kernels/normalize).
#
#   kforge_plan_pair DIR OUT_NAME VARIANT NAME...
#       for each NAME: DIR/NAME.json, DIR/NAME.split.kf and DIR/NAME.VARIANT.kf. Compiles all the
#       programs in parallel (JOBS, default 8), then per problem the full tier of both programs
#       (correctness against the CPU and GPU fp64 references, audit, cold-L2 timing) and both timed
#       interleaved (A B A B chunks) in one worker session:
#         kforge eval --tier full --interleave --problem NAME.json --program NAME.split.kf --program NAME.VARIANT.kf
#       One line per program: problem, plan, status, full-tier median, interleaved median, GB/s
#       (bytes the evaluator counts over the interleaved median), split/this. Results under
#       $OUT/OUT_NAME (NAME.json, NAME.err, summary.txt). Needs R (the repository root), K and
#       DEVICE set (kforge_cases.sh). Returns 1 when an evaluation gave no report or a program
#       did not pass.
kforge_plan_pair() {
    local D=$1 oname=$2 variant=$3 n v
    shift 3
    local O=${OUT:-/tmp/kforge-out}/$oname
    mkdir -p "$O/compile"
    export KFORGE_CACHE_DIR=${KFORGE_CACHE_DIR:-/tmp/kforge-cache}
    local pre=()
    for n in "$@"; do
        for v in split "$variant"; do pre+=("$n.$v|$D/$n.json|$D/$n.$v.kf"); done
    done
    local start
    start=$(date +%s)
    JOBS=${JOBS:-8} kforge_precompile "$O/compile" "$DEVICE" "${pre[@]}"
    echo "compiled ${#pre[@]} programs in $(( $(date +%s) - start )) s" | tee "$O/summary.txt"
    local failed=0 rc
    for n in "$@"; do
        timeout 400 "$K" eval --device "$DEVICE" --tier full --interleave --problem "$D/$n.json" \
            --program "$D/$n.split.kf" --program "$D/$n.$variant.kf" --json > "$O/$n.json" 2> "$O/$n.err"
        rc=$?
        python3 "$R/bench/lib/interleaved_table.py" "$O/$n.json" "$n" "$rc" --base split |
            tee -a "$O/summary.txt" || failed=1
    done
    return $failed
}
