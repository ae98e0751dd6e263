#!/usr/bin/env bash
# Two axes of one extent in one tensor on the GPU (python/kforge_py/spec_dims.py names them
# apart; the simulated device does not run a program's numerics): kforge's own KernelBench-format
# files 130-132 (window scores against themselves with a bias, softmax and a row mean; pairwise
# distances of a point set; a cumsum over a row of 3 chunks, its pairwise differences) and
# tests/planner/attention_kb/segsum_tril.py imported, and each start program through every gate
# (`kforge eval --tier full`: correctness_small against the fp64 interpreter, correctness_full
# against the GPU fp64 reference) - the renaming reshape copies, the broadcast copies storing
# [.., L, L_1] and the vec-1 scan run for real. With KB=<KernelBench checkout> also level 3's
# 30, 48 and 49 (the files that had one dim name twice).
# One device call; from the repo root, with the carried binary (as bench/copy/run.sh).
#
# usage: OUT=DIR bash bench/kernelbench/equal_extents_gpu.sh
# environment: KFORGE (.carry/bin/kforge), DEVICE (cuda; sim for a dry run), KB (none).
# Results under $OUT/equal_extents: specs/, programs/, eval/<stem>.json, status.txt, steps.txt.
set -uo pipefail
R=$PWD
KB=${KB:-/nonexistent}
. "$R/bench/lib/kernelbench_bench.sh"
kb_bench_init equal_extents 0
files=("$R"/examples/kernelbench/13[0-2]_*.py "$R"/tests/planner/attention_kb/segsum_tril.py)
kb_add_files level3 "30_SwinTransformerV2 48_Mamba2ReturnY 49_Mamba2ReturnFinalState"
kb_import 1800
kb_status 600 gates
kb_summary gates
