#!/usr/bin/env bash
# Session 20's generalization sweep on the GPU (bench/kernelbench/results/2026-12-06-cpu-sweep-s20.md;
# the simulated device does not run a program's numerics): the sweep's fixture files
# (tests/python/fixtures/sweep: comparisons as 0/1 indicators read by where / masked_fill and a
# -inf fill through log(1 - mask), zero RNN states, pixel shuffle, addmm + GLU + Softmax2d, a
# nearest upsampling and a repeat as expand copies, scans and normalizes between transposes, a
# 1-d avg pool, PReLU + nll_loss, logsumexp over two dims, in-place ops, LSTMCell / GRUCell
# loops) imported, and each start program through every gate (`kforge eval --tier full`:
# correctness_small against the fp64 interpreter, correctness_full against the GPU fp64
# reference). The copy kernels of an expand, the transposed scans and the gate arithmetic run
# for real. One device call; from the repo root, with the carried binary (as bench/copy/run.sh).
#
# usage: OUT=DIR bash bench/kernelbench/sweep_s20_gpu.sh
# environment: KFORGE (.carry/bin/kforge), DEVICE (cuda; sim for a dry run).
# Results under $OUT/sweep_s20: specs/, programs/, eval/<stem>.json, status.txt, steps.txt.
set -uo pipefail
R=$PWD
KB=${KB:-/nonexistent}
. "$R/bench/lib/kernelbench_bench.sh"
kb_bench_init sweep_s20 0
files=("$R"/tests/python/fixtures/sweep/*.py)
kb_import 1800
kb_status 600 gates
kb_summary gates
