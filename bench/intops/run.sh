#!/usr/bin/env bash
# Issue 25 (integer and bool tensors) on the GPU: the KernelBench level-1 files with index
# outputs, bool masks, integer targets and triangular masks (51 argmax, 52 argmin, 93 masked
# cumsum, 95 cross entropy, 14/15 triu/tril of a matmul) plus kforge's own examples 60-65 ->
# specs (per-file import status) -> the planner's verdict per spec -> `kforge eval` of each
# start program through every gate (correctness_full against the GPU fp64 reference, exact
# equality for i64 outputs) -> `kforge suite --device cuda` under one budget -> PyTorch
# baselines (eager and torch.compile) stored into each problem's run -> `kforge report`.
# One device call; from the repo root, with the carried binary (as bench/conv/run.sh).
#
# usage: OUT=DIR bash bench/intops/run.sh KERNELBENCH_CHECKOUT
# environment: KFORGE (.carry/bin/kforge), DEVICE (cuda; sim for a dry run), SUITE_S (240, the
#   suite's --budget-wall), MODES (eager,compile_default), KFORGE_PYTHON (python with torch),
#   FILES (level-1 stems, default "51_* 52_* 93_* 95_* 14_* 15_*").
# Results under $OUT/intops: import.log, status.txt (per file: import status, planner verdict,
#   the start program's gates), specs/, eval/<spec>.json (kforge eval --json), suite.log,
#   baseline.log, report/, steps.txt.
set -uo pipefail
R=$PWD
KB=${1:?usage: OUT=DIR bash bench/intops/run.sh KERNELBENCH_CHECKOUT}
. "$R/bench/lib/kernelbench_bench.sh"
kb_bench_init intops 240
kb_add_files level1 "${FILES:-51_* 52_* 93_* 95_* 14_* 15_*}"
files+=("$R"/examples/kernelbench/6[0-5]_*.py)

kb_import 1200      # 1. import (one Python process); a failed file keeps no spec
kb_status 180 gates # 2. per file: import status, the planner's start program (or why not), and
                    #    that program through every gate on DEVICE (kforge eval --json:
                    #    correctness_small/hidden against the CPU interpreter, correctness_full at
                    #    the real shape against the GPU fp64 reference)
kb_suite            # 3. the suite over the specs
kb_baseline 1200    # 4. baselines (eager, torch.compile), stored into each problem's newest run
kb_report           # 5. the report over the suite's runs
kb_summary gates
