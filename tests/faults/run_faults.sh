#!/bin/sh
# The fault suite on the GPU with a kforge binary: compiles every kernel of tests/faults/ with
# nvcc -cubin for sm_90a into $OUT/cubin and runs all scenarios (tests/faults/scenarios.json)
# through ONE supervisor session with the CUDA device (`kforge eval --fault-suite`), printing
# scenario -> expected -> got and writing $OUT/faults.log (+ the worker's stderr in
# $OUT/faults_worker.log). Exit 0 when every scenario matched, 1 on a mismatch, 3 without a GPU.
# Usage: K=/path/to/kforge OUT=/path/to/outdir tests/faults/run_faults.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${K:?set K to a kforge binary}"
: "${OUT:?set OUT to an output folder}"
nvcc=${NVCC:-nvcc}
command -v "$nvcc" >/dev/null 2>&1 || nvcc=/usr/local/cuda/bin/nvcc
mkdir -p "$OUT/cubin"
for cu in "$here"/*.cu; do
    name=$(basename "$cu")
    "$nvcc" -cubin -arch=sm_90a -O3 -o "$OUT/cubin/$name.cubin" "$cu" || {
        echo "nvcc failed on $name" | tee "$OUT/faults.log"; exit 2; }
done
"$K" eval --device cuda --fault-suite "$here/scenarios.json" --cubin-dir "$OUT/cubin" \
    --worker-log "$OUT/faults_worker.log" >"$OUT/faults.log" 2>&1
rc=$?
cat "$OUT/faults.log"
exit $rc
