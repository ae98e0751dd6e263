#!/usr/bin/env bash
# bench/calls (README.md) - device call 4 (issue 26): Level 3 networks the KernelBench way -
# bench/export/run.sh with only Level 3 files (L3: their stems, a batch that fits one call):
# import, export (the start program, CUTLASS compiles 14 at a time), harness (Model vs ModelNew:
# 5 correctness trials, eager and torch.compile timed end to end, CUDA graph and fullgraph
# checks), then kforge's evaluator through every gate (EVAL_TIER, full). The export bench keeps
# its work in /tmp/kforge-export: a second call with the same L3 on the still-warm machine
# resumes where the first stopped. CALL_S (560) bounds the call.
T0=$(date +%s); R=$OUT/c4; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,temperature.gpu --format=csv > $R/gpu.txt 2>&1
echo "start $(date -u +%T) L3=${L3:?set L3 to the Level 3 stems of this batch}" > $R/steps_c4.txt
mkdir -p /tmp/kforge-export && touch /tmp/kforge-export/device_test_done
OUT=$R/exp BUILTIN=" " KERNELBENCH=" " OVERHEAD=" " L3_DIR=${KB:-.kb/KernelBench/KernelBench}/level3 \
    EVAL_TIER=${EVAL_TIER:-full} DEADLINE_S=$(( ${CALL_S:-560} - 25 )) HARNESS_S=${HARNESS_S:-420} \
    bash bench/export/run.sh > $R/export.log 2>&1
echo "export rc=$? $(( $(date +%s) - T0 ))s" >> $R/steps_c4.txt
cd $OUT && tar czf c4.tgz c4; cp c4/steps_c4.txt c4/gpu.txt . ; cp c4/exp/export_table.md l3_table.md 2>/dev/null; rm -rf c4; true
