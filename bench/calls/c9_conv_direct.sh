#!/usr/bin/env bash
# bench/calls (README.md) - device call 9 (issue 24): the direct convolution (`schedule direct`,
# kernels/conv_direct.cuh: one launch, NCHW in and out, exact f32 FMA, the chain in registers)
# against the planner's start program (CUTLASS implicit GEMM: staging, fprop, output transform)
# on convolutions of few input channels. For each stem: import, the start program
# (`kforge export --no-build`), its implicit-GEMM twin (v_igemm.kf: its direct conv kernels on
# multistage 3xTF32, as the planner started them before), and twins whose conv kernels of at
# most DIRECT_MAX (300) products an output (C*T*R*S) run `schedule direct` at the tiles in
# DIRECT_TILES (one the checker refuses keeps its knobs); then
# `kforge eval --interleave` of them all in one worker session: every gate and the timing,
# interleaved A B C A B C. CALL_S (560) bounds the call; EVAL_TIER (full) the tier; DEVICE=sim
# is a dry run.
T0=$(date +%s); R=$OUT/c9; mkdir -p $R
K=${KFORGE:-$PWD/.carry/bin/kforge}
KB=${KB:-.kb/KernelBench/KernelBench}
STEMS=${STEMS:-"level2/73_Conv2d_BatchNorm_Scaling level2/57_Conv2d_ReLU_HardSwish level2/6_Conv3d_Softmax_MaxPool_MaxPool level3/8_ResNetBasicBlock level2/21_Conv2d_Add_Scale_Sigmoid_GroupNorm"}
DIRECT_TILES=${DIRECT_TILES:-"128x64x16 128x32x16"}
. bench/calls/kb_start.sh
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,temperature.gpu --format=csv > $R/gpu.txt 2>&1
echo "| problem | program | status | timing gate | largest median rel err (profile) | note |" > $R/direct.md
echo "|---|---|---|---|---|---|" >> $R/direct.md
for s in $STEMS; do
    left=$(( ${CALL_S:-560} - ($(date +%s) - T0) )); [ $left -gt 45 ] || break
    n=$(basename $s); d=$R/$n; mkdir -p $d
    kb_start $s $d || continue
    cp $d/exp/program.kf $d/start.kf
    P="--program $d/start.kf"
    # the implicit-GEMM twin (igemm.kf: the conv kernels the planner now starts on direct, at the
    # knobs it started them on before: multistage 3xTF32, few_channels where that lowers) and
    # the direct twins at DIRECT_TILES
    for t in igemm $DIRECT_TILES; do
        python3 - "$K" "$d/exp/spec.json" "$d/start.kf" "$d/v_$t.kf" "$t" <<'PY'
import json, re, subprocess, sys, tempfile, os
k, spec, start, out, tile = sys.argv[1:]
lines = open(start).read().split("\n")
sp = json.load(open(spec))
dims = sp.get("dims", {})
def shape(wname):
    t = (sp.get("inputs", {}).get(wname) or {}).get("shape") or []
    return [e if isinstance(e, int) else dims.get(e, 10**9) for e in t]
limit = int(os.environ.get("DIRECT_MAX", "300"))
knobs = re.compile(r"tile \S+ stages \S+ schedule \S+ math \S+ acc \S+ swizzle \S+( iterator \S+)?")
def lowers(trial):
    with tempfile.TemporaryDirectory() as td:
        p = os.path.join(td, "p.kf"); open(p, "w").write("\n".join(trial))
        r = subprocess.run([k, "compile", spec, p, "-o", os.path.join(td, "o"), "--no-build"],
                           capture_output=True, text=True)
    return r.returncode == 0, (r.stdout + r.stderr)[-300:]
for i, line in enumerate(lines):
    if " = conv2d(" not in line: continue
    m = re.search(r"conv2d\(\w+\[[^]]*\], (\w+)\[", line)
    w = shape(m.group(1)) if m else []
    if len(w) < 3: continue
    products = 1
    for e in w[1:]: products *= e
    if tile == "igemm":
        if "schedule direct" not in line: continue
        tn = 32 if w[0] <= 32 else 64
        options = [f"tile 128x{tn}x32 stages 3 schedule multistage math tf32x3 acc f32 swizzle 1 iterator few_channels",
                   f"tile 128x{tn}x32 stages 3 schedule multistage math tf32x3 acc f32 swizzle 1"]
    else:
        if products > limit: continue
        options = [f"tile {tile} stages 1 schedule direct math f32_simt acc f32 swizzle 1"]
    for o in options:
        trial = list(lines)
        trial[i] = knobs.sub(o, line)
        ok, why = lowers(trial)
        if ok:
            lines = trial
            break
        print(f"{os.path.basename(out)}: kernel line {i + 1} not as {o}: {why}", file=sys.stderr)
open(out, "w").write("\n".join(lines))
PY
        cmp -s $d/start.kf $d/v_$t.kf || P="$P --program $d/v_$t.kf"
    done 2>> $R/steps.txt
    timeout $(( left - 15 )) "$K" eval "$d/exp/spec.json" $P \
        --tier ${EVAL_TIER:-full} --interleave --device ${DEVICE:-cuda} --json > $d/eval.json 2> $d/eval.err
    echo "$n eval rc=$? $(( $(date +%s) - T0 ))s" >> $R/steps.txt
    python3 bench/calls/eval_rows.py "$d/eval.json" "$n" >> $R/direct.md
    echo "interleaved: $(python3 -c "import json,sys; t=json.load(open(sys.argv[1])).get('timing',{}); print([(p.get('status'), [rep.get('stats',{}).get('median_ns') for rep in p.get('repetitions',[])]) for p in t.get('programs',[])])" $d/eval.json 2>&1 | head -c 400)" >> $R/steps.txt
done
cd $OUT && tar czf c9.tgz c9; cp c9/direct.md c9/steps.txt c9/gpu.txt . 2>/dev/null; rm -rf c9; cat direct.md
