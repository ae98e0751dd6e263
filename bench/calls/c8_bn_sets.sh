#!/usr/bin/env bash
# bench/calls (README.md) - device call 8 (issues 24, 26): BatchNorm's batch statistics as one
# set reduction per statistic (`rowwise mean(X) over N,H,W`, kernels/reduce_set.cuh) against
# the chain of single-dim means the planner emitted before (3 launches per statistic). For each
# stem: import, the start program of this build (set.kf) and of the build before the change
# (chain.kf: OLD_KFORGE, default old/.carry/bin/kforge, a carry unpacked into old/), then
# `kforge eval --tier full --interleave` of both with this build: every gate at the full shape
# (the set kernel's first GPU run) and the two timed A B A B in one worker session.
# CALL_S (560) bounds the call; DEVICE=sim is a dry run (modelled times).
T0=$(date +%s); R=$OUT/c8; mkdir -p $R
K=${KFORGE:-$PWD/.carry/bin/kforge}
OLD=${OLD_KFORGE:-$PWD/old/.carry/bin/kforge}
KB=${KB:-.kb/KernelBench/KernelBench}
STEMS=${STEMS:-"level1/33_BatchNorm level1/34_InstanceNorm level1/94_MSELoss level2/73_Conv2d_BatchNorm_Scaling level3/8_ResNetBasicBlock level3/9_ResNet18"}
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,temperature.gpu --format=csv > $R/gpu.txt 2>&1
echo "| problem | kernels chain / set | chain median us | set median us | chain / set | status chain, set |" > $R/bn_sets.md
echo "|---|---|---|---|---|---|" >> $R/bn_sets.md
for s in $STEMS; do
    left=$(( ${CALL_S:-560} - ($(date +%s) - T0) )); [ $left -gt 45 ] || break
    n=$(basename $s); d=$R/$n; mkdir -p $d
    timeout 120 "$K" import kernelbench "$KB/$s.py" -o $d/specs --allow-degenerate > $d/import.txt 2>&1
    spec=$(ls $d/specs/*.json 2>/dev/null | head -1)
    timeout 120 "$K" export "$spec" -o $d/new --no-build > $d/export_new.txt 2>&1
    timeout 120 "$OLD" export "$spec" -o $d/old --no-build > $d/export_old.txt 2>&1
    [ -f $d/new/program.kf ] && [ -f $d/old/program.kf ] || { echo "$n: no start program" >> $R/steps.txt; continue; }
    cp $d/old/program.kf $d/chain.kf; cp $d/new/program.kf $d/set.kf
    timeout $(( left - 15 )) "$K" eval "$d/new/spec.json" --program $d/chain.kf --program $d/set.kf \
        --tier ${EVAL_TIER:-full} --interleave --device ${DEVICE:-cuda} --json > $d/eval.json 2> $d/eval.err
    echo "$n eval rc=$? $(( $(date +%s) - T0 ))s" >> $R/steps.txt
    python3 - "$d/eval.json" "$n" "$d/chain.kf" "$d/set.kf" >> $R/bn_sets.md <<'PY'
import json, sys
kernels = [sum(1 for l in open(f) if l.startswith("kernel ")) for f in sys.argv[3:5]]
try:
    j = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print(f"| {sys.argv[2]} | {kernels[0]} / {kernels[1]} | no report ({e}) | | | |"); sys.exit()
st = [((c.get("report") or {}).get("status")) for c in j.get("candidates", [])]
med = []
for p in (j.get("timing") or {}).get("programs", []):
    reps = [r.get("stats", {}).get("median_ns") for r in p.get("repetitions", [])]
    reps = sorted(x for x in reps if x)
    med.append(reps[len(reps) // 2] / 1e3 if reps else None)
ratio = f"{med[0] / med[1]:.3f}" if len(med) == 2 and all(med) else "-"
print(f"| {sys.argv[2]} | {kernels[0]} / {kernels[1]} | {med[0] if med else '-'} | "
      f"{med[1] if len(med) > 1 else '-'} | {ratio} | {', '.join(map(str, st))} |")
PY
done
cd $OUT && tar czf c8.tgz c8; cp c8/bn_sets.md . ; cp c8/steps.txt steps_c8.txt 2>/dev/null; rm -rf c8; cat bn_sets.md
