#!/usr/bin/env bash
# Row reductions with an element-wise prologue on the GPU (`rowwise sum(A[M,K]) pre { mul B[K,N] }`):
# for each spec here, the plan the planner gave before the prologue existed (NAME.split.kf) against
# the one row kernel it seeds now (NAME.row.kf). The checker accepts both for the same problem.
#   matvec_f32: A[2048,65536] @ B[65536,1] (examples/kernelbench/18_matvec.py): a CUTLASS 3xTF32
#               GEMM with N = 1 (tile 64x64, 63/64 of every tile wasted) against one row sum
#               whose prologue multiplies by B.
#   mse_f32:    mean((P - T)^2) at 16384 x 4096: a map writing (P - T)^2, a row mean reading it
#               back and the mean of the row means, against the row mean with the prologue
#               { sub T; square } (the element-wise value is never written) and the same last mean.
# Full tier (correctness against the CPU and GPU fp64 references, audit, cold-L2 timing) of both
# programs, then both timed interleaved (A B A B chunks) in one worker session:
#   kforge eval --tier full --interleave --problem NAME.json --program NAME.split.kf --program NAME.row.kf
# One line per program: problem, plan, status, full-tier median, interleaved median, split/this.
#   bash bench/kernels/rowpro/run.sh [OUT]      (about 2-3 minutes)
# environment: K (kforge; default .carry/bin/kforge, else build/*/cli/kforge), OUT (or the first
#   argument; default /tmp/kforge-out; results under $OUT/rowpro: NAME.json, NAME.err,
#   summary.txt), DEVICE (cuda; sim: a smoke test of this script, every line SIMULATED), JOBS (8).
# Exit 1 when an evaluation gave no report or a program did not pass, 2 on bad arguments.
set -uo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd)
case "${1:-}" in
    -h|--help) sed -n 2,20p "$0"; exit 0 ;;
    "") ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) OUT=$(mkdir -p "$1" && cd "$1" && pwd) || exit 2; export OUT ;;
esac
[ $# -le 1 ] || { echo "at most one argument (the output folder)" >&2; exit 2; }
cd "$R"
. "$R/bench/lib/kforge_cases.sh"
. "$R/bench/lib/plan_pair.sh"
kforge_bench_setup "$R"
kforge_plan_pair bench/kernels/rowpro rowpro row matvec_f32 mse_f32
