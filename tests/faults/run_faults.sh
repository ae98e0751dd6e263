#!/bin/sh
# The fault suite on the GPU: builds kforge and the fault-suite test, compiles every kernel in
# tests/faults/ with nvcc -cubin for sm_90a and runs them all through ONE supervisor session
# with the CUDA device, printing scenario -> expected -> got. Exit non-zero on any difference;
# skips visibly (exit 0, SKIPPED) without a GPU.  Usage: tests/faults/run_faults.sh [build dir]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/faults}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "SKIPPED: no GPU (nvidia-smi finds none); the simulated suite is FaultSuiteSim"
    exit 0
fi
[ -f "$build/CMakeCache.txt" ] || cmake --preset dev -B "$build" >/dev/null
cmake --build "$build" --target kforge_cli test_eval_fault_suite_gpu -j"$(nproc)"
exec "$build/tests/eval/test_eval_fault_suite_gpu" --gtest_filter='FaultSuiteGpu.*'
