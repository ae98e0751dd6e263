#!/usr/bin/env bash
# Named values (`let`) on the GPU: for each spec here, the plan without named values
# (NAME.split.kf: the value read twice goes through memory, two kernels) against the one-kernel
# plan the planner now seeds (NAME.let.kf), same knobs. Full tier (correctness against the CPU
# and GPU fp64 references, audit, cold-L2 timing) of both programs, then both timed interleaved
# (A B A B chunks) in one worker session:
#   kforge eval --tier full --interleave --problem NAME.json --program NAME.split.kf --program NAME.let.kf
# One line per program: problem, plan, status, full-tier median, interleaved median, ratio.
#   bash bench/kernels/letval/run.sh            (about 2-4 minutes; the two gemms compile in parallel)
# environment: K (kforge; default .carry/bin/kforge, else build/*/cli/kforge), OUT
#   (/tmp/kforge-out; results under $OUT/letval: NAME.json, NAME.err, summary.txt), DEVICE
#   (cuda; sim: a smoke test of this script, every line SIMULATED), JOBS (6 parallel compiles).
# Exit 1 when an evaluation gave no report or a program did not pass, 2 on bad arguments.
set -uo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$R"
. "$R/bench/lib/kforge_cases.sh"
. "$R/bench/lib/plan_pair.sh"
case "${1:-}" in -h|--help) sed -n 2,14p "$0"; exit 0 ;; "") ;; *) echo "no arguments" >&2; exit 2 ;; esac
kforge_bench_setup "$R"
kforge_plan_pair bench/kernels/letval letval let linear_self_residual_bf16 softsign_f32 elu_f32
