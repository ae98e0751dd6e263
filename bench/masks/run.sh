#!/usr/bin/env bash
# Issue 25, bool masks that are data: masked_fill / where by a bool input and nn.MultiheadAttention
# with attn_mask / key_padding_mask, on the GPU. kforge's own files (bench/masks/*.py at bench
# sizes, tests/python/fixtures/sweep/mask_input_select.py, tests/planner/attention_kb/mha_*.py)
# -> specs -> the planner's start program through every gate (correctness_full against the GPU
# fp64 reference, which reads the bool inputs as 1-byte tensors) -> suite -> PyTorch baselines
# (eager, torch.compile) -> report. One device call; from the repo root, with the carried binary
# (as bench/intops/run.sh).
#
# usage: OUT=DIR bash bench/masks/run.sh
# environment: as bench/lib/kernelbench_bench.sh (KFORGE, DEVICE, SUITE_S, MODES, KFORGE_PYTHON)
# Results under $OUT/masks: import.log, status.txt, specs/, eval/, suite.log, baseline.log,
#   report/, steps.txt.
set -uo pipefail
R=$PWD
KB=${KB:-/nonexistent}
. "$R/bench/lib/kernelbench_bench.sh"
kb_bench_init masks 240
files+=("$R"/bench/masks/*.py "$R"/tests/python/fixtures/sweep/mask_input_select.py
        "$R"/tests/planner/attention_kb/mha_*.py "$R"/examples/kernelbench/61_masked_fill_where.py)

kb_import 600
kb_status 180 gates
kb_suite
kb_baseline 900
kb_report
kb_summary gates
