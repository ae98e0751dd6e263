#!/usr/bin/env bash
# Everything one session measures on the lent H200, in one device call (bench/NOTES.md has the
# results). Run from the repository root on the GPU machine with:
#   .carry/bin/kforge   a release build of kforge made on the development machine
#   .carry/lib/         shared libraries that machine lacks (libsqlite3, libcrypto)
#   .venv/.../cutlass_library/source/{include,tools/util/include}   the CUTLASS headers
# Writes logs and result tables to $OUT.
set -uo pipefail
R=$PWD
O=${OUT:-/tmp/kforge-out}; mkdir -p "$O"
# kforge's compile driver holds the source and CUTLASS paths of the build machine (/work/main).
mkdir -p /work && { [ -e /work/main ] || ln -s "$R" /work/main; }
export LD_LIBRARY_PATH=$R/.carry/lib:${LD_LIBRARY_PATH:-}
export KFORGE_CACHE_DIR=/tmp/kforge-cache
K=$R/.carry/bin/kforge
NVCC="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I."
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw,power.limit --format=csv > "$O/gpu.txt" 2>&1
"$K" --version >> "$O/gpu.txt" 2>&1 || { echo "kforge does not start here"; ldd "$K"; exit 3; }

# 1. Template self-test and bandwidth benchmark (built in the background).
mkdir -p build
( $NVCC tests/kernels/gpu_selftest.cu -o build/gpu_selftest && $NVCC bench/kernels/rowwise_bench.cu -o build/rowwise_bench ) > "$O/nvcc.log" 2>&1 &
nvcc_pid=$!

# 2. Compile every suite program through the evaluator's own path (tier compile), 14 at once,
#    so the timed evaluations below hit the compile cache.
start=$(date +%s)
ls problems/*.kf | xargs -P 14 -I{} sh -c 'n=$(basename {} .kf); '"$K"' eval --problem problems/$n.json --program {} --tier compile --device cuda > /tmp/compile-$n.txt 2>&1; echo "$n rc=$?"' > "$O/compile.txt" 2>&1
echo "compile wall: $(( $(date +%s) - start )) s" >> "$O/compile.txt"
wait $nvcc_pid
build/gpu_selftest > "$O/selftest.txt" 2>&1; echo "selftest rc=$?" >> "$O/selftest.txt"

# 3. Every suite program, gated evaluation at tier quick on the GPU, one at a time.
: > "$O/eval.jsonl"
for spec in problems/*.json; do
    n=$(basename "$spec" .json)
    timeout 120 "$K" eval --problem "$spec" --program "problems/$n.kf" --tier quick --device cuda --json > /tmp/eval-$n.json 2> /tmp/eval-$n.err
    rc=$?
    python3 - "$n" "$rc" /tmp/eval-$n.json /tmp/eval-$n.err >> "$O/eval.jsonl" <<'PY'
import json, sys
n, rc, out, err = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
try:
    j = json.load(open(out))
except Exception:
    j = {"stderr": open(err).read()[-2000:], "stdout": open(out).read()[-2000:]}
j["problem_file"] = n; j["rc"] = rc
print(json.dumps(j))
PY
done

# 4. PyTorch eager baselines with the same protocol (cold L2, median of 50).
python3 bench/suite/torch_eager.py problems/*.json > "$O/eager.jsonl" 2> "$O/eager.err"

# 5. Row-wise bandwidth benchmark last (it is the longest).
timeout 150 build/rowwise_bench > "$O/rowwise_bench.txt" 2>&1
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> "$O/gpu.txt" 2>&1
tail -3 "$O/selftest.txt"; cat "$O/compile.txt" | tail -3; wc -l "$O/eval.jsonl" "$O/eager.jsonl"
