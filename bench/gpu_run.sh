#!/usr/bin/env bash
# One device call on the lent H200: the phases named on the command line, in order, each writing
# its log and results under $OUT (bench/NOTES.md records what they showed). From the repository
# root on the GPU machine, with
#   .carry/bin/kforge   a wrapper that runs .carry/bin/kforge.real (a build made on the
#                       development machine) with .carry/lib/ (the libraries it links) on its path
#   .venv/.../cutlass_library/source/{include,tools/util/include}   the CUTLASS headers
# usage: bash bench/gpu_run.sh PHASE... [-- PROBLEM...]
#   compile   every problems/*.kf compiled through the evaluator (tier compile), 14 at once,
#             with the wall time of each (the compile cache serves the phases after it)
#   quick     gated quick-tier evaluation of the named problems (default: all), one at a time
#   eager     PyTorch eager baselines of every problem (bench/suite/torch_eager.py)
#   ncu       the flawed-kernel set under Nsight Compute (bench/profile/record_fixtures.sh)
#   selftest  the kernel-template self-test (tests/kernels/gpu_selftest.cu)
#   evalprep  compiles (in parallel) the programs of the evaluation benchmarks below
#   faults    the fault suite in one supervisor session (tests/faults/run_faults.sh)
#   quickwall wall time of warm quick-tier evaluations (bench/eval/quick_wall.sh)
#   stability 10 full-tier timings in one session, and interleaved GEMM tilings
#             (bench/eval/stability.sh)
#   baseline  kforge baseline (PyTorch eager, torch.compile) of two problems into a store
#   gpuref    the GPU fp64 reference against the CPU interpreter for every problem
#             (.carry/bin/test_reference_gpu, a build of tests/reference/gpu_reference_gpu_test)
#   nvrtc     `kforge compile` wall time of the row-wise/map programs (NVRTC, no nvcc)
#   import    KernelBench import -> suite -> baselines -> report -> check (bench/import/run.sh)
set -uo pipefail
R=$PWD
O=${OUT:-/tmp/kforge-out}; mkdir -p "$O"
export KFORGE_CACHE_DIR=/tmp/kforge-cache
K=$R/.carry/bin/kforge
. "$R/bench/lib/link_build_tree.sh"
kforge_link_build_tree "$K" "$R"
NVCC="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I."
phases=(); problems=()
while [ $# -gt 0 ]; do
    if [ "$1" = "--" ]; then shift; problems=("$@"); break; fi
    phases+=("$1"); shift
done
[ ${#problems[@]} -gt 0 ] || problems=($(ls problems/*.json | xargs -n1 basename | sed 's/\.json$//'))
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw,power.limit --format=csv > "$O/gpu.txt" 2>&1
"$K" --version >> "$O/gpu.txt" 2>&1 || { echo "kforge does not start here"; ldd "$K"; exit 3; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }  # no bc there

phase_compile() {
    local start; start=$(now)
    ls problems/*.kf | xargs -P 14 -I{} sh -c 'n=$(basename {} .kf); s=$(date +%s.%N); '"$K"' eval --problem problems/$n.json --program {} --tier compile --device cuda --json > '"$O"'/compile-$n.json 2>&1; rc=$?; echo "$n rc=$rc wall_s=$(awk -v a=$s -v b=$(date +%s.%N) "BEGIN { printf \"%.2f\", b - a }")"' > "$O/compile.txt" 2>&1
    echo "compile wall total: $(since "$start") s (14 parallel jobs, $(nproc) cores)" >> "$O/compile.txt"
    tail -1 "$O/compile.txt"
}

phase_quick() {
    : > "$O/quick.jsonl"
    for n in "${problems[@]}"; do
        local s; s=$(now)
        timeout 120 "$K" eval --problem "problems/$n.json" --program "problems/$n.kf" --tier quick --device cuda --json > /tmp/eval-$n.json 2> /tmp/eval-$n.err
        local rc=$? w; w=$(since "$s")
        python3 - "$n" "$rc" "$w" /tmp/eval-$n.json /tmp/eval-$n.err >> "$O/quick.jsonl" <<'PY'
import json, sys
n, rc, w, out, err = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
try:
    j = json.load(open(out))
except Exception:
    j = {"stdout": open(out).read()[-2000:]}
j["stderr_tail"] = open(err).read()[-1500:]
j["problem_file"] = n; j["rc"] = rc; j["process_wall_s"] = w
print(json.dumps(j))
PY
        echo "$n rc=$rc wall=${w}s $(python3 -c "import json,sys; j=json.load(open('/tmp/eval-$n.json')); print(j.get('status'), j.get('timing',{}).get('median_ns',''))" 2>/dev/null)"
    done | tee "$O/quick.txt"
}

phase_eager() {
    timeout 300 python3 bench/suite/torch_eager.py problems/*.json > "$O/eager.jsonl" 2> "$O/eager.err"
    echo "eager rc=$? lines=$(wc -l < "$O/eager.jsonl")"
}

phase_ncu() {
    mkdir -p "$O/ncu"
    OUT="$O/ncu" KFORGE="$K" timeout 300 bash bench/profile/record_fixtures.sh > "$O/ncu/log.txt" 2>&1
    echo "ncu rc=$?"; tail -12 "$O/ncu/log.txt"
}

phase_selftest() {
    mkdir -p build
    $NVCC tests/kernels/gpu_selftest.cu -o build/gpu_selftest > "$O/selftest-build.log" 2>&1 &&
        build/gpu_selftest > "$O/selftest.txt" 2>&1
    echo "selftest rc=$?"; tail -2 "$O/selftest.txt"
}

phase_evalprep() {
    for f in tests/eval/data/gemm_bf16_4096 tests/eval/data/gemm_f32_4096 tests/eval/data/row_sum_f32 \
             bench/eval/gemm_bf16_4096_t128x256; do
        n=$(basename $f); n=${n%_t128x256}
        ( "$K" eval --problem problems/$n.json --program $f.kf --tier compile --device cuda \
              > "$O/evalprep-$(basename $f).txt" 2>&1; echo "$(basename $f) rc=$?" ) &
    done
    wait
}

phase_faults() { K=$K OUT=$O/faults timeout 150 bash tests/faults/run_faults.sh; echo "faults rc=$?"; }
phase_quickwall() { K=$K OUT=$O/quickwall timeout 150 bash bench/eval/quick_wall.sh; echo "quickwall rc=$?"; }
phase_stability() { K=$K OUT=$O/stability timeout 200 bash bench/eval/stability.sh; echo "stability rc=$?"; }

phase_baseline() {
    KFORGE_PYTHON=python3 timeout 120 "$K" baseline problems/softmax_long_rows_f32.json \
        problems/linear_bias_gelu_tanh_bf16.json --modes eager,compile_default \
        --db "$O/baseline.db" --json > "$O/baseline.json" 2> "$O/baseline.err"
    echo "baseline rc=$?"; tail -3 "$O/baseline.err"
}

phase_gpuref() {
    LD_LIBRARY_PATH="$R/.carry/lib" timeout 300 "$R/.carry/bin/test_reference_gpu" > "$O/gpuref.txt" 2>&1
    echo "gpuref rc=$?"; grep -E "PASSED|FAILED|SKIPPED|max_rel" "$O/gpuref.txt" | tail -8
}

phase_nvrtc() {
    : > "$O/nvrtc.txt"
    for n in row_sum_f32 softmax_long_rows_f32 layer_norm_bf16 log_softmax_vocab_bf16 \
             mish_softplus_chain_f32 group_norm_f32; do
        local s; s=$(now)
        "$K" compile "problems/$n.kf" --problem "problems/$n.json" -o "/tmp/nvrtc-$n" \
            --cache "/tmp/nvrtc-cache-$n" > "/tmp/nvrtc-$n.log" 2>&1
        echo "$n rc=$? wall_s=$(since "$s") $(grep -io 'nvrtc[^,]*' /tmp/nvrtc-$n.log | head -1)" >> "$O/nvrtc.txt"
    done
    cat "$O/nvrtc.txt"
}

phase_import() {
    OUT=$O KFORGE=$K KFORGE_PYTHON=python3 timeout 420 bash bench/import/run.sh; echo "import rc=$?"
}

for p in "${phases[@]}"; do
    echo "== $p ($(date -u +%T))"
    "phase_$p"
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> "$O/gpu.txt" 2>&1
echo "== done ($(date -u +%T))"
