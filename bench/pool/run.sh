#!/usr/bin/env bash
# Issue 24's pooling half on the GPU: KernelBench level-1 pooling (41 MaxPool1d, 42 MaxPool2d,
# 43 MaxPool3d, 44 AvgPool1d, 45 AvgPool2d, 46 AvgPool3d) plus kforge's own examples 70-76
# (ceil_mode, count_include_pad, divisor_override, adaptive pools, conv -> pool, global average
# pooling) -> specs (per-file import status) -> the planner's start program per spec -> `kforge
# eval --tier full` of each start program through every gate (correctness_full at the real shape
# against the GPU fp64 reference) -> `kforge suite --device cuda` under one budget -> PyTorch
# baselines (eager and torch.compile) stored into each problem's run -> `kforge report`.
# LEVEL2=1 adds the level-2 files whose names contain Pool (most need conv forms or norms that
# other work brings: their import status is listed, the rest runs on what imports).
# One device call; from the repo root, with the carried binary (as bench/intops/run.sh).
#
# usage: OUT=DIR bash bench/pool/run.sh KERNELBENCH_CHECKOUT
# environment: KFORGE (.carry/bin/kforge), DEVICE (cuda; sim for a dry run), SUITE_S (240, the
#   suite's --budget-wall), MODES (eager,compile_default), KFORGE_PYTHON (python with torch),
#   FILES (level-1 stems, default "41_* 42_* 43_* 44_* 45_* 46_*"), LEVEL2 (0).
# Results under $OUT/pool: import.log, status.txt (per file: import status, planner verdict, the
#   start program's gates), specs/, programs/, eval/<file>.json (kforge eval --json), suite.log,
#   baseline.log, report/, steps.txt.
set -uo pipefail
R=$PWD
KB=${1:?usage: OUT=DIR bash bench/pool/run.sh KERNELBENCH_CHECKOUT}
. "$R/bench/lib/kernelbench_bench.sh"
kb_bench_init pool 240
kb_add_files level1 "${FILES:-41_* 42_* 43_* 44_* 45_* 46_*}"
[ "${LEVEL2:-0}" = 1 ] && kb_add_files level2 "*Pool*"
files+=("$R"/examples/kernelbench/7[0-6]_*.py)

kb_import 1500      # 1. import (one Python process); a failed file keeps no spec
kb_status 180 gates # 2. per file: import status, the planner's start program, its gates on DEVICE
kb_suite            # 3. the suite over the specs
kb_baseline 1500    # 4. baselines (eager, torch.compile), stored into each problem's newest run
kb_report           # 5. the report over the suite's runs
kb_summary gates
