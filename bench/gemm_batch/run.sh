#!/usr/bin/env bash
# Matmuls of any rank on the GPU (issue 26: codegen/gemm_spec.h batch dims, batch stride 0, fold,
# planner/plan_gemm.cpp expand copies): eight problems at network sizes, each planner start
# program through every gate (`kforge eval --tier full`: correctness_full against the GPU fp64
# reference) with its median time, then the same program with every gemm moved to the CUTLASS
# 2.x multistage path (the sm80 builder's batch strides), then kforge's own KernelBench files
# 120-122 (rank-4/5 matmuls, broadcast batch dims) imported and through every gate.
# What each form checks on the GPU (none of it ran on one before):
#   qk_rank4_bf16      q[B,H,T,E] @ k^T: two batch dims flattened into one L, B read K-major
#   attv_rank4_bf16    att[B,H,T,T] @ v[B,H,T,E]: M and K share the name T (matmul's order)
#   state_rank5_f32    Mamba-2's [b,c,h,l,l] x [b,c,h,n,l]^T in fp32_strict (staged 3xTF32, L=32768)
#   shared_left_bf16   p[M,K] @ y[B,K,N]: A with batch stride 0 through TMA (sm90) / cp.async
#   shared_left_t_tf32 p[K,M]^T @ y[B,K,N] under tf32: the unbatched A staged once, stride 0
#   per_head_bf16      x[B,H,M,K] @ w[H,K,N]: w expanded by a copy kernel, then one batched gemm
#   fold_rank5_bf16    x[B,C,H,L,K] @ p[B,1,1,K,N]: C and H folded into M, B the batch
#   shared_res_bf16    x[B,F,M,K] @ w[K,N] + r[M,N]: no fold (r), w and r (C) with batch stride 0
# One device call; from the repo root, with the carried binary (as bench/copy/run.sh).
#
# usage: OUT=DIR bash bench/gemm_batch/run.sh
# environment: KFORGE (.carry/bin/kforge), DEVICE (cuda; sim for a dry run).
# Results under $OUT/gemm_batch: micro/*.json, programs/NAME.kf and NAME.ms.kf (multistage),
#   eval/NAME[.ms].json (kforge eval --json) and .log, table.md (name | path | status | median
#   us | TFLOP/s), status.txt (120-122), steps.txt.
set -uo pipefail
R=$PWD
KB=/nonexistent  # no KernelBench files: our own examples only
. "$R/bench/lib/kernelbench_bench.sh"
kb_bench_init gemm_batch 0
mkdir -p "$O/micro" "$O/programs" "$O/eval"

spec() {  # name dims inputs graph outputs policy
    printf '{"name": "%s", "dims": %s, "inputs": %s, "graph": %s, "outputs": %s, "precision": {"policy": "%s"}}\n' \
        "$1" "$2" "$3" "$4" "$5" "$6" > "$O/micro/$1.json"
}
mm='[{"op": "matmul", "inputs": ["a", "b"], "output": "y"}]'
mm_tb='[{"op": "matmul", "inputs": ["a", "b"], "output": "y", "transpose_b": true}]'
spec qk_rank4_bf16 '{"B": 16, "H": 12, "T": 1024, "S": 1024, "E": 64}' \
    '{"a": {"shape": ["B","H","T","E"], "dtype": "bf16"}, "b": {"shape": ["B","H","S","E"], "dtype": "bf16"}}' \
    "$mm_tb" '["y"]' bf16
spec attv_rank4_bf16 '{"B": 16, "H": 12, "T": 1024, "E": 64}' \
    '{"a": {"shape": ["B","H","T","T"], "dtype": "bf16"}, "b": {"shape": ["B","H","T","E"], "dtype": "bf16"}}' \
    "$mm" '["y"]' bf16
spec state_rank5_f32 '{"Z": 2048, "C": 2, "G": 8, "L": 64, "S": 64, "N": 16}' \
    '{"a": {"shape": ["Z","C","G","L","S"], "dtype": "f32"}, "b": {"shape": ["Z","C","G","N","S"], "dtype": "f32"}}' \
    "$mm_tb" '["y"]' fp32_strict
spec shared_left_bf16 '{"B": 32, "M": 1024, "K": 512, "N": 1024}' \
    '{"a": {"shape": ["M","K"], "dtype": "bf16"}, "b": {"shape": ["B","K","N"], "dtype": "bf16"}}' \
    "$mm" '["y"]' bf16
spec shared_left_t_tf32 '{"B": 32, "M": 1024, "K": 512, "N": 1024}' \
    '{"a": {"shape": ["K","M"], "dtype": "f32"}, "b": {"shape": ["B","K","N"], "dtype": "f32"}}' \
    '[{"op": "matmul", "inputs": ["a", "b"], "output": "y", "transpose_a": true}]' '["y"]' tf32
spec per_head_bf16 '{"B": 8, "H": 16, "M": 512, "K": 256, "N": 256}' \
    '{"a": {"shape": ["B","H","M","K"], "dtype": "bf16"}, "b": {"shape": ["H","K","N"], "dtype": "bf16"}}' \
    "$mm" '["y"]' bf16
spec fold_rank5_bf16 '{"B": 4, "C": 8, "H": 8, "L": 128, "K": 64, "N": 128}' \
    '{"a": {"shape": ["B","C","H","L","K"], "dtype": "bf16"}, "b": {"shape": ["B",1,1,"K","N"], "dtype": "bf16"}}' \
    "$mm" '["y"]' bf16
spec shared_res_bf16 '{"B": 16, "F": 64, "M": 128, "K": 512, "N": 512}' \
    '{"a": {"shape": ["B","F","M","K"], "dtype": "bf16"}, "b": {"shape": ["K","N"], "dtype": "bf16"}, "r": {"shape": ["M","N"], "dtype": "bf16"}}' \
    '[{"op": "matmul", "inputs": ["a", "b"], "output": "h"}, {"op": "add", "inputs": ["h", "r"], "output": "y"}]' \
    '["y"]' bf16

row() {  # eval json, name, path
    python3 - "$1" "$2" "$3" >> "$O/table.md" <<'PY'
import json, sys
try:
    d = json.JSONDecoder().raw_decode(open(sys.argv[1]).read())[0]
except Exception as e:
    print(f"| {sys.argv[2]} | {sys.argv[3]} | no result ({e}) | | |"); sys.exit(0)
t = (d.get("timing") or {}).get("median_ns") or 0
f = d.get("flops") or 0
print(f"| {sys.argv[2]} | {sys.argv[3]} | {d.get('status')} | {t / 1e3:.1f} | "
      f"{(f / (t * 1e-9) / 1e12 if t else 0):.1f} |")
PY
}
echo "| problem | path | status | median us | TFLOP/s |" > "$O/table.md"
echo "|---|---|---|---|---|" >> "$O/table.md"
for s in "$O"/micro/*.json; do
    n=$(basename "$s" .json)
    step "plan_$n" 300 "$K" optimize "$s" --device sim --rounds 0 --db "$O/plan.db" > "$O/eval/$n.plan.log" 2>&1
    kb_start_program "$O/plan.db" "$n" > "$O/programs/$n.kf"
    # the same kernels on CUTLASS 2.x (sm80 multistage builder): one configuration it takes
    sed -E -e 's/schedule [a-z_]+/schedule multistage/' -e 's/cluster [0-9]+x[0-9]+/cluster 1x1/' \
        -e 's/tile [0-9]+x[0-9]+x[0-9]+/tile 128x128x32/' -e 's/stages [a-z0-9]+/stages 3/' \
        -e 's/splitk [0-9]+/splitk 1/' "$O/programs/$n.kf" > "$O/programs/$n.ms.kf"
    for v in "" .ms; do
        step "eval_$n$v" 600 "$K" eval "$s" --program "$O/programs/$n$v.kf" --tier full \
            --device "$DEVICE" --json > "$O/eval/$n$v.json" 2> "$O/eval/$n$v.log"
        row "$O/eval/$n$v.json" "$n" "$([ -z "$v" ] && echo planner || echo multistage)"
    done
done
cat "$O/table.md"

files=("$R"/examples/kernelbench/12[0-2]_*.py)
kb_import 900       # our own KernelBench-format files
kb_status 300 gates # their start programs through every gate on DEVICE
kb_summary gates
