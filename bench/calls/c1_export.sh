#!/usr/bin/env bash
# bench/calls (README.md) - device call 1 (issue 23): gemm_gap.sh then the export bench; run from $S (snapshot root)
T0=$(date +%s)
R=$OUT/c1; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,temperature.gpu --format=csv > $R/gpu.txt 2>&1
echo "start $(date -u +%T)" > $R/steps.txt
if [ "${GAP:-1}" = 1 ]; then  # GAP=0: the export table alone (the gap was measured in session 23)
    OUT=$R/gap timeout 200 bash bench/export/gemm_gap.sh > $R/gap.log 2>&1; echo "gap rc=$? $(( $(date +%s) - T0 ))s" >> $R/steps.txt
fi
mkdir -p /tmp/kforge-export && touch /tmp/kforge-export/device_test_done
left=$(( ${CALL_S:-570} - ($(date +%s) - T0) ))
OUT=$R/exp EVAL_TIER=quick DEADLINE_S=$left bash bench/export/run.sh > $R/export.log 2>&1; echo "export rc=$? $(( $(date +%s) - T0 ))s" >> $R/steps.txt
cd $OUT && tar czf c1.tgz c1; cp c1/steps.txt c1/gpu.txt . ; cp c1/gap/gemm_gap.md . 2>/dev/null; cp c1/exp/export_table.md . 2>/dev/null; rm -rf c1; true
