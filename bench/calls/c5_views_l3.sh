#!/usr/bin/env bash
# bench/calls (README.md) - device call 5 (issue 26): the slice-view check of L3 43
# (bench/kernelbench/slice_views_gpu.sh, ~200 s, its own 260 s limit), then c4_l3.sh with the
# batch L3 in the rest of the call (CALL_S, 575 s in all). Leaves sv.tgz, sv.log,
# sv_summary.txt beside c4's files in $OUT.
T0=$(date +%s)
( OUT=$OUT/sv timeout 260 bash bench/kernelbench/slice_views_gpu.sh ${KB:-.kb/KernelBench/KernelBench} \
      > $OUT/sv.log 2>&1
  echo "slice_views rc=$? $(( $(date +%s) - T0 ))s" >> $OUT/sv.log
  cd $OUT && cp sv/slice_views/summary.txt sv_summary.txt 2>/dev/null; tar czf sv.tgz sv && rm -rf sv )
CALL_S=$(( ${CALL_S:-575} - ($(date +%s) - T0) )) bash bench/calls/c4_l3.sh
