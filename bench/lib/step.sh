# shellcheck shell=bash
# Sourced by the bench scripts that log their steps (bench/lib/kernelbench_bench.sh,
# bench/import/run.sh). Needs O (the results folder) set when a step runs.
#   step NAME TIMEOUT_S CMD...
#       runs CMD under a timeout (killed 10 s after it), appends "NAME rc=.. wall_s=.." to
#       $O/steps.txt (and prints it), returns CMD's exit code.
step() {
    local name=$1 limit=$2; shift 2
    local s=$SECONDS
    timeout --kill-after=10 "$limit" "$@"
    local rc=$?
    echo "$name rc=$rc wall_s=$((SECONDS - s))" | tee -a "$O/steps.txt"
    return $rc
}
