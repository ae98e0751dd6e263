#!/usr/bin/env bash
# kforge_rt_launch's own host cost per call, no GPU (rt_host_cost.cpp): built with the host
# compiler against a build tree's libkforge_runtime.so and run on its fake CUDA driver
# (tests/runtime/fake_cuda_driver.cpp, target kforge_fake_cuda_driver).
#   bash bench/export/rt_host_cost.sh [BUILD_DIR]      (default build/ci)
set -euo pipefail
R=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "${1:-$R/build/ci}" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
${CXX:-c++} -O2 -std=c++20 -I"$R" -I"${CUDA_HOME:-/usr/local/cuda}/include" \
    "$R/bench/export/rt_host_cost.cpp" -o "$T/rt_host_cost" \
    -L"$B/runtime" -lkforge_runtime -Wl,-rpath,"$B/runtime" -ldl
for k in 1 3; do
    LD_LIBRARY_PATH="$B/tests/runtime/fake_cuda" "$T/rt_host_cost" "$k"
done
