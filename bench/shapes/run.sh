#!/usr/bin/env bash
# Issue 25 (shapes as views) on the GPU: the KernelBench files whose forward uses shape code -
# level 1: 12 (diag(A) @ B written A.unsqueeze(1) * B), 92 (exclusive cumsum with narrow, .size()
# and cat); level 2 with FILES2 (default 28, 55, 98, 67: unsqueeze / squeeze around a norm or a
# pool) - plus kforge's own examples 90-97 (views, permutes, slices, cat/stack/split, pad, expand)
# -> specs (per-file import status) -> the planner's verdict per spec (a folded view costs no
# kernel; other data movement is refused by name) -> `kforge eval` of each start program through
# every gate (correctness_full against the GPU fp64 reference, whose shape-op kernels are
# reference/gpu_reference_shape.cpp) -> `kforge suite --device cuda` under one budget -> PyTorch
# baselines (eager and torch.compile) stored into each problem's run -> `kforge report`.
# One device call; from the repo root, with the carried binary (as bench/intops/run.sh).
#
# usage: OUT=DIR bash bench/shapes/run.sh KERNELBENCH_CHECKOUT
# environment: KFORGE (.carry/bin/kforge), DEVICE (cuda; sim for a dry run), SUITE_S (240, the
#   suite's --budget-wall), MODES (eager,compile_default), KFORGE_PYTHON (python with torch),
#   FILES (level-1 stems, default "12_* 92_*"), FILES2 (level-2 stems, default
#   "28_* 55_* 98_* 67_*").
# Results under $OUT/shapes: import.log, status.txt (per file: import status, planner verdict,
#   the start program's gates), specs/, eval/<spec>.json (kforge eval --json), suite.log,
#   baseline.log, report/, steps.txt.
set -uo pipefail
R=$PWD
KB=${1:?usage: OUT=DIR bash bench/shapes/run.sh KERNELBENCH_CHECKOUT}
. "$R/bench/lib/kernelbench_bench.sh"
kb_bench_init shapes 240
kb_add_files level1 "${FILES:-12_* 92_*}"
kb_add_files level2 "${FILES2:-28_* 55_* 98_* 67_*}"
files+=("$R"/examples/kernelbench/9[0-7]_*.py)

# 1. import; 2. the planner's verdict per file and its start program's gates on DEVICE (the GPU
# fp64 reference's shape-op kernels: reference/gpu_reference_shape.cpp); 3. the suite; 4. the
# baselines, stored into each problem's newest run; 5. the report.
kb_import 1200
kb_status 180 gates
kb_suite
kb_baseline 1200
kb_report
kb_summary gates
