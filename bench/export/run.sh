#!/usr/bin/env bash
# bench/export: kforge's exported programs checked and timed the way KernelBench evaluates a
# ModelNew (issue 23), on the GPU machine, in one device call (< 9 minutes):
#   0. the CUDA device's GPU test (its launches now go through runtime/, the path exports use)
#   1. the KernelBench examples imported (kforge import kernelbench)
#   2. every problem exported for this GPU (kforge export, 8 at a time: CUTLASS compiles)
#   3. kforge's own evaluator on the same program (kforge eval --tier full --json), one at a time
#   4. bench/export/harness.py per export (4 processes; GPU sections under one lock): Model vs
#      ModelNew, 5 correctness trials, 100 timed trials with an L2 flush, eager and
#      torch.compile, CUDA-graph and torch.compile(fullgraph=True) checks
#   5. $OUT/export_results.jsonl, $OUT/export_table.md; the table printed last
# Here:        bash bench/export/make_carry.sh build/ci     (then carry .carry.tar.xz)
# GPU machine: tar xJf .carry.tar.xz && bash bench/export/run.sh
# BUILTIN / KERNELBENCH override the problem lists (space-separated names); 22 by default. No
# tf32-policy problem by default: KernelBench's fp32 tolerance (1e-4) is fp32's, not TF32's.
set -uo pipefail
R=$PWD
O=${OUT:-/tmp/kforge-out}; mkdir -p "$O"
K=$R/.carry/bin/kforge
RTLIB=$R/.carry/lib/libkforge_runtime.so
[ -x "$K" ] || { echo "run.sh: $K missing (bash bench/export/make_carry.sh here first)"; exit 3; }
[ -e "$RTLIB" ] || { echo "run.sh: $RTLIB missing"; exit 3; }
. "$R/bench/lib/link_build_tree.sh"
kforge_link_build_tree "$K" "$R"
export KFORGE_CACHE_DIR=/tmp/kforge-cache KFORGE_PYTHON=${KFORGE_PYTHON:-python3} KFORGE_HOME=$R
export PYTHONPATH="$R/python${PYTHONPATH:+:$PYTHONPATH}"
W=/tmp/kforge-export; rm -rf "$W"; mkdir -p "$W/specs"
T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 ))s] $*"; }

BUILTIN=${BUILTIN:-"gemm_fp16_4096 gemm_bf16_4096 gemm_f32_4096 gemm_nt_fp16 bmm_bf16
    linear_bias_relu_bf16 linear_bias_gelu_erf_fp16 linear_bias_sigmoid_f32
    linear_scale_residual_bf16 softmax_long_rows_f32 softmax_short_rows_f32 layer_norm_bf16
    rms_norm_bf16 row_sum_f32"}
KERNELBENCH=${KERNELBENCH:-"01_gemm_bias_relu 02_bmm 03_softmax 04_layer_norm 06_gemm_gelu_chain
    14_square_matmul 15_gemm_sigmoid_residual 17_linear_3d_gelu"}
# The whole script stays under DEADLINE_S (a device call runs 10 minutes at most): the eval and
# harness phases stop early, leaving the rows done so far, and the table is printed regardless.
DEADLINE_S=${DEADLINE_S:-510}
left() { echo $(( DEADLINE_S - ($(date +%s) - T0) )); }

stamp "0. device GPU test (one launch path)"
LD_LIBRARY_PATH="$R/.carry/lib" timeout 180 "$R/.carry/bin/test_device_cuda_gpu" \
    > "$O/device_gpu_test.txt" 2>&1
echo "test_device_cuda_gpu rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$O/device_gpu_test.txt" | tr '\n' ' ')"

stamp "1. import KernelBench examples"
kb_files=(); for n in $KERNELBENCH; do kb_files+=("$R/examples/kernelbench/$n.py"); done
timeout 240 "$K" import kernelbench "${kb_files[@]}" -o "$W/specs" > "$O/import.txt" 2>&1
echo "import rc=$? ($(ls "$W/specs"/*.json 2>/dev/null | wc -l) of ${#kb_files[@]} specs)"

stamp "2. export (14 at a time)"
jobs_file=$W/jobs.txt; : > "$jobs_file"
for n in $BUILTIN; do echo "$n $R/problems/$n.json -" >> "$jobs_file"; done
for n in $KERNELBENCH; do
    [ -e "$W/specs/kb_$n.json" ] && echo "kb_$n $W/specs/kb_$n.json $R/examples/kernelbench" >> "$jobs_file"
done
export K RTLIB W
xargs -P 14 -L 1 bash -c '
    d=$W/$0; kb=(); [ "$2" != - ] && kb=(--kernelbench "$2")
    timeout 400 "$K" export "$1" -o "$d" --runtime-lib "$RTLIB" "${kb[@]}" > "$W/$0.export.txt" 2>&1
    echo "$0 export rc=$?"' < "$jobs_file" | sort | tee "$O/export.txt" | grep -v "rc=0" || true
echo "exported: $(grep -c 'rc=0' "$O/export.txt") of $(wc -l < "$jobs_file")"

stamp "3. kforge eval --tier full (one at a time)"
while read -r n spec kb; do
    d=$W/$n; [ -e "$d/program.kf" ] || continue
    [ "$(left)" -gt 200 ] || { echo "$n eval skipped: out of time"; continue; }
    timeout 120 "$K" eval "$d/spec.json" --program "$d/program.kf" --tier full --device cuda \
        --json > "$d/kforge_eval.json" 2> "$d/kforge_eval.err"
    echo "$n eval rc=$? $(python3 "$R/bench/lib/eval_line.py" "$d/kforge_eval.json" "$d/kforge_eval.err" 80)"
done < "$jobs_file" | tee "$O/eval.txt"

stamp "4. harness (4 processes, GPU sections locked)"
: > "$W/gpu.lock"
while read -r n spec kb; do [ -e "$W/$n/program.kf" ] && echo "$W/$n"; done < "$jobs_file" |
    timeout "$(( $(left) - 15 ))" xargs -P 4 -I{} timeout 240 \
        python3 "$R/bench/export/harness.py" {} --lock "$W/gpu.lock" \
    > "$O/export_results.jsonl" 2> "$O/harness.err"
stamp "harness done: $(wc -l < "$O/export_results.jsonl") rows"
# the exports' evidence, README, eval reports and logs (no binaries): 8 files come back at most
tar czf "$O/export_logs.tgz" -C "$W" --exclude='*.cubin' --exclude='*.so' --exclude='*.cu' . 2>/dev/null
python3 "$R/bench/export/table.py" "$O/export_results.jsonl" > "$O/export_table.md"
stamp "5. table"
cat "$O/export_table.md"
