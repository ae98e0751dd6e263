#!/usr/bin/env bash
# bench/calls (README.md) - device call 7 (issue 24): the Hopper convolution (`schedule tma_ws`,
# codegen/lower_conv_sm90.cpp: CUTLASS 3.x sm90 fprop; 3xTF32 as a tf32 convolution over hi/lo
# channel copies in chunks added in f32) against the sm80 multistage one, on KernelBench's dense
# convolutions. For each stem: import, the planner's start program (`kforge export --no-build`)
# and its twins (below), then `kforge eval --tier full --interleave` of them: every gate (the fp32_strict error
# profile included) and the full-tier timing, interleaved A B A B, in one worker session.
# CALL_S (560) bounds the call; EVAL_TIER (full) the tier (quick for 4 GiB operands: the full
# tier of ShallowWideMLP or L1 33 ran past 280 s, session 28); DEVICE=sim is a dry run.
T0=$(date +%s); R=$OUT/c7; mkdir -p $R
K=${KFORGE:-$PWD/.carry/bin/kforge}
KB=${KB:-.kb/KernelBench/KernelBench}
STEMS=${STEMS:-"level1/55_conv_standard_2D__asymmetric_input__square_kernel level3/4_LeNet5 level3/2_ShallowWideMLP level1/87_conv_pointwise_2D level1/67_conv_standard_1D level3/8_ResNetBasicBlock level1/80_conv_standard_2D_square_input_asymmetric_kernel___dilated____padded__ level1/62_conv_standard_2D__square_input__asymmetric_kernel level1/50_conv_standard_2D__square_input__square_kernel level1/76_conv_standard_1D_dilated_strided__"}
TILE=${TILE:-128x128x32}
. bench/calls/kb_start.sh
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,temperature.gpu --format=csv > $R/gpu.txt 2>&1
echo "| problem | program | status | timing gate | largest median rel err (profile) | note |" > $R/conv_sm90.md
echo "|---|---|---|---|---|---|" >> $R/conv_sm90.md
for s in $STEMS; do
    left=$(( ${CALL_S:-560} - ($(date +%s) - T0) )); [ $left -gt 45 ] || break
    n=$(basename $s); d=$R/$n; mkdir -p $d
    kb_start $s $d || continue
    # three programs: old.kf, every dense conv2d kernel as session 26's start program ran it
    # (multistage 128x64x32, the optimized iterator); start.kf, this planner's start program
    # (tma_ws from 16 channels on, few_channels below tile K, tile N 32 for few filters); sm90.kf,
    # every conv2d kernel on tma_ws at TILE. Identical ones run once.
    sed -E '/= conv2d\(/ { /f32_simt/! { s/tile [0-9]+x[0-9]+x([0-9]+) stages [0-9]+ schedule (multistage|tma_ws)/tile 128x64x\1 stages 3 schedule multistage/; s/ iterator [a-z_]+// } }' $d/exp/program.kf > $d/old.kf
    # COOP_STEMS: their f32 gemm kernels as session 26 started them (cooperative 128x128 on
    # staged 3xTF32 parts) in old.kf, against this planner's multistage for staging-bound shapes
    case " ${COOP_STEMS-level3/2_ShallowWideMLP} " in *" $s "*)
        sed -i -E '/= gemm\(/ s/tile [0-9]+x[0-9]+x32 cluster 1x1 stages [0-9]+ schedule multistage math tf32x3/tile 128x128x32 cluster 1x1 stages auto schedule cooperative math tf32x3/' $d/old.kf ;;
    esac
    cp $d/exp/program.kf $d/start.kf
    sed -E '/= conv2d\(/ { /f32_simt/! { s/tile [0-9]+x[0-9]+x[0-9]+ stages [0-9]+ schedule (multistage|tma_ws)/tile '$TILE' stages 3 schedule tma_ws/; s/ iterator [a-z_]+// } }' $d/exp/program.kf > $d/sm90.kf
    P="--program $d/old.kf"
    cmp -s $d/old.kf $d/start.kf || P="$P --program $d/start.kf"
    cmp -s $d/old.kf $d/sm90.kf || cmp -s $d/start.kf $d/sm90.kf || P="$P --program $d/sm90.kf"
    timeout $(( left - 15 )) "$K" eval "$d/exp/spec.json" $P \
        --tier ${EVAL_TIER:-full} --interleave --device ${DEVICE:-cuda} --json > $d/eval.json 2> $d/eval.err
    echo "$n eval rc=$? $(( $(date +%s) - T0 ))s" >> $R/steps.txt
    python3 bench/calls/eval_rows.py "$d/eval.json" "$n" >> $R/conv_sm90.md
echo "interleaved: $(python3 -c "import json,sys; t=json.load(open(sys.argv[1])).get('timing',{}); print([(p.get('status'), [rep.get('stats',{}).get('median_ns') for rep in p.get('repetitions',[])]) for p in t.get('programs',[])])" $d/eval.json 2>&1 | head -c 300)" >> $R/steps.txt
done
cd $OUT && tar czf c7.tgz c7; cp c7/conv_sm90.md c7/steps.txt c7/gpu.txt . 2>/dev/null; rm -rf c7; cat conv_sm90.md
