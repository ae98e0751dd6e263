#!/usr/bin/env bash
# bench/calls (README.md) - device call 6 (issue 26): where the slow Level 3 start programs
# spend their time. Session 26's first Level 3 run put LeNet5 at 0.13x eager, AlexNet 0.27x and
# ShallowWideMLP 0.59x (bench/export/results/2026-12-07-h100-l3-s26.md); a 3xTF32 GEMM runs at
# ~92 TFLOPS on the H100 (gemm_f32_4096), which would put ShallowWideMLP's 550 GFLOP at ~6 ms,
# not the 17.9 measured. For each stem of L3: import, the planner's start program
# (`kforge export --no-build`), then `kforge eval --tier quick --device cuda --json`: its
# timing gate times every kernel alone (kernel_times_ns, one per DSL kernel); the table lists
# each kernel's median and share beside its DSL line. CALL_S (560) bounds the call; DEVICE=sim
# is a dry run (modelled times).
T0=$(date +%s); R=$OUT/c6; mkdir -p $R
K=${KFORGE:-$PWD/.carry/bin/kforge}
L3=${L3:-"4_LeNet5 2_ShallowWideMLP 5_AlexNet"}
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,temperature.gpu --format=csv > $R/gpu.txt 2>&1
for n in $L3; do
    left=$(( ${CALL_S:-560} - ($(date +%s) - T0) )); [ $left -gt 60 ] || break
    f=${KB:-.kb/KernelBench/KernelBench}/level3/$n.py
    timeout 120 "$K" import kernelbench "$f" -o $R/specs --allow-degenerate > $R/$n.import.txt 2>&1
    timeout 120 "$K" export $R/specs/kb_$n.json -o $R/$n --no-build > $R/$n.export.txt 2>&1
    timeout $(( left - 20 )) "$K" eval $R/$n/spec.json --program $R/$n/program.kf --tier quick \
        --device ${DEVICE:-cuda} --json > $R/$n.eval.json 2> $R/$n.eval.err
    echo "$n eval rc=$? $(( $(date +%s) - T0 ))s" >> $R/steps.txt
    python3 - "$R/$n.eval.json" "$R/$n/program.kf" >> $R/kernels.md <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print(f"\n{sys.argv[1]}: no report ({e})"); sys.exit()
lines = [l for l in open(sys.argv[2]) if l.startswith("kernel ")]
ks = j.get("kernel_times_ns") or []
total = j.get("timing", {}).get("median_ns")
print(f"\n## {j.get('problem', sys.argv[1])}: {j.get('status')} median "
      f"{(total or 0) / 1e3:.1f} us, kernels' sum {sum(ks) / 1e3:.1f} us\n")
print("| kernel | us | share | DSL |\n|---|---|---|---|")
for i, t in enumerate(ks):
    dsl = lines[i].strip()[:160] if i < len(lines) else ""
    print(f"| {i} | {t / 1e3:.1f} | {t / max(sum(ks), 1):.0%} | `{dsl}` |")
PY
done
cd $OUT && tar czf c6.tgz c6; cp c6/kernels.md c6/steps.txt c6/gpu.txt . 2>/dev/null; rm -rf c6; cat kernels.md
