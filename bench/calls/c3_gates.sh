#!/usr/bin/env bash
# bench/calls (README.md) - device call 3 (issues 25/26): sweep_s20, masks, equal extents
T0=$(date +%s); R=$OUT/c3; mkdir -p $R
el() { echo $(( $(date +%s) - T0 )); }
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,temperature.gpu --format=csv > $R/gpu.txt 2>&1
OUT=$R timeout 200 bash bench/kernelbench/sweep_s20_gpu.sh > $R/sweep.log 2>&1; echo "sweep rc=$? $(el)s" >> $R/steps_c3.txt
OUT=$R DEVICE=cuda timeout 200 bash bench/masks/run.sh > $R/masks.log 2>&1; echo "masks rc=$? $(el)s" >> $R/steps_c3.txt
left=$(( 560 - $(el) )); [ $left -gt 30 ] && { OUT=$R KB=.kb/KernelBench timeout $left bash bench/kernelbench/equal_extents_gpu.sh > $R/equal.log 2>&1; echo "equal rc=$? $(el)s" >> $R/steps_c3.txt; }
cd $OUT && tar czf c3.tgz c3; cp c3/steps_c3.txt c3/gpu.txt . ; rm -rf c3; true
