#!/usr/bin/env bash
# L1 / L2 normalization on the GPU: for each spec here (16384 x 4096, f32 and bf16), the plan the
# import gave before l1_normalize / l2_normalize existed (NAME.split.kf: separate kernels for
# |x| or x^2, the row sum (+ sqrt, + clamp), and the divide that reads X again) against the one
# row kernel the planner now seeds (NAME.row.kf). The checker accepts both for the same problem.
# Full tier (correctness against the CPU and GPU fp64 references, audit, cold-L2 timing) of both
# programs, then both timed interleaved (A B A B chunks) in one worker session:
#   kforge eval --tier full --interleave --problem NAME.json --program NAME.split.kf --program NAME.row.kf
# One line per program: problem, plan, status, full-tier median, interleaved median, split/this.
#   bash bench/kernels/normalize/run.sh          (about 2-3 minutes)
# environment: K (kforge; default .carry/bin/kforge, else build/*/cli/kforge), OUT
#   (/tmp/kforge-out; results under $OUT/normalize: NAME.json, NAME.err, summary.txt), DEVICE
#   (cuda; sim: a smoke test of this script, every line SIMULATED), JOBS (8 parallel compiles).
# Exit 1 when an evaluation gave no report or a program did not pass, 2 on bad arguments.
set -uo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$R"
. "$R/bench/lib/kforge_cases.sh"
. "$R/bench/lib/plan_pair.sh"
case "${1:-}" in -h|--help) sed -n 2,15p "$0"; exit 0 ;; "") ;; *) echo "no arguments" >&2; exit 2 ;; esac
kforge_bench_setup "$R"
kforge_plan_pair bench/kernels/normalize normalize row l2_normalize_f32 l2_normalize_bf16 l1_normalize_f32 l1_normalize_bf16
