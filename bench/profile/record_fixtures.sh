#!/usr/bin/env bash
# Records the ncu raw page of the flawed-kernel set on the GPU and checks kforge's diagnosis.
# One device call, from the repository root on the GPU machine:
#   KFORGE=.carry/bin/kforge bash bench/profile/record_fixtures.sh
# Writes to $OUT: ncu_flawed.csv (ncu's output: the raw page), diagnosis.txt (per kernel:
# class, evidence, moves), expected_vs_got.txt, ncu_command.txt, build.log. Exits non-zero
# when a kernel is misdiagnosed (1), or when ncu/GPU/counters are unusable (3).
# The metric list is profile/metrics.txt, used through kforge's own runner (`kforge profile
# --exe`), so the recorded fixture is exactly what `kforge profile` collects.
set -uo pipefail
R=$PWD
O=${OUT:-/tmp/kforge-profile-out}; mkdir -p "$O"
K=${KFORGE:-$R/.carry/bin/kforge}
# .carry/bin/kforge is a wrapper that sets its own library path (ncu must not see it)
NCU=${NCU:-$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu \
    /usr/local/cuda/nsight-compute*/ncu 2>/dev/null | head -1)}
if [ -z "$NCU" ] || [ ! -x "$NCU" ]; then echo "ncu not found (set NCU=)"; exit 3; fi
"$NCU" --version > "$O/ncu_version.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv >> "$O/ncu_version.txt" 2>&1
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
mkdir -p build
"$NVCC" -O3 -lineinfo -gencode=arch=compute_90a,code=sm_90a -Xptxas -v \
    bench/profile/flawed_kernels.cu -o build/flawed_kernels > "$O/build.log" 2>&1 \
    || { echo "nvcc failed"; tail -20 "$O/build.log"; exit 3; }
build/flawed_kernels >> "$O/build.log" 2>&1 || { echo "flawed_kernels failed"; tail -5 "$O/build.log"; exit 3; }
"$K" --version > /dev/null 2>&1 || { echo "kforge does not start ($K)"; exit 3; }
"$K" profile --ncu "$NCU" --exe build/flawed_kernels --print-ncu-args > "$O/ncu_command.txt"
timeout 580 "$K" profile --ncu "$NCU" --timeout 560 --exe build/flawed_kernels \
    --csv-out "$O/ncu_flawed.csv" --expect bench/profile/expected.txt \
    > "$O/diagnosis.txt" 2> "$O/expected_vs_got.txt"
rc=$?
"$K" profile --json --csv "$O/ncu_flawed.csv" > "$O/diagnosis.json" 2>/dev/null
cat "$O/diagnosis.txt" "$O/expected_vs_got.txt"
echo "record_fixtures: rc=$rc (0 all diagnosed as expected, 1 misdiagnosed, 3 no profile)"
exit $rc
