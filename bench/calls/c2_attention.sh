#!/usr/bin/env bash
# bench/calls (README.md) - device call 2 (issue 25): bench/attention/run.sh
T0=$(date +%s); R=$OUT/c2; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,temperature.gpu --format=csv > $R/gpu.txt 2>&1
OUT=$R timeout 540 bash bench/attention/run.sh > $R/attention.log 2>&1; echo "attention rc=$? $(( $(date +%s) - T0 ))s" > $R/steps_c2.txt
cd $OUT && tar czf c2.tgz c2; cp c2/steps_c2.txt c2/gpu.txt . ; cp c2/attention/summary.md attention_summary.md 2>/dev/null; rm -rf c2; true
