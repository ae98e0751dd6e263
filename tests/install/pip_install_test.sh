#!/usr/bin/env bash
# The pip route (issue 30): `pip install .` of the project into a new virtual environment gives a
# working `kforge` on the environment's PATH and an importable `kforge_py`, and the installed CLI
# runs with the source tree hidden (its data in <venv>/share/kforge, CUTLASS from the
# nvidia-cutlass package in the venv). Needs the network (PyPI: scikit-build-core, nvidia-cutlass
# and its dependencies, numpy) and builds the kforge CLI again in build/wheel, its compiles served
# by the ccache that the CTest build folder filled: the same compiler name (CXX, which
# scikit-build-core would otherwise set to Python's own, g++, a different ccache key from CMake's
# c++), flags and source tree. Measured on the 2-core dev machine: 39 s for the pip install with
# every compile a ccache hit (231 of 231, 23 CPU-seconds), 1008 CPU-seconds cold (2662 s wall at
# nice 19 under a load of 13-16). A build folder that does not compile through ccache would make
# it the cold build: the test says so and is skipped, or fails under CI (CI set).
# usage: pip_install_test.sh SOURCE_DIR [CXX_COMPILER [COMPILER_LAUNCHER]]
set -euo pipefail
src=$(realpath "$1")
cxx=${2:-}
launcher=${3:-}
if [ -n "$cxx" ] && [[ "$launcher" != *ccache* ]]; then
    why="this build folder does not compile through ccache (cmake/Ccache.cmake sets it on a new build folder where ccache is installed): the wheel would build kforge from scratch, over 8 minutes on 2 cores"
    if [ -n "${CI:-}" ]; then echo "FAIL: $why" >&2; exit 1; fi
    echo "SKIP: $why"
    exit 77
fi
[ -z "$cxx" ] || export CXX="$cxx"
t=$(mktemp -d /tmp/kforge-pip-XXXXXX)
trap 'rm -rf "$t"' EXIT

# hits and misses of the ccache, before and after (what made the build fast or slow)
ccache_counts() {
    command -v ccache > /dev/null || return 0
    ccache --print-stats 2>/dev/null |
        awk '$1 ~ /^(direct_cache_hit|preprocessed_cache_hit)$/ {h += $2} $1 == "cache_miss" {m = $2} END {print h + 0, m + 0}'
}
read -r hits0 misses0 _ <<< "$(ccache_counts) 0 0"
python3 -m venv "$t/venv"
start=$(date +%s)
"$t/venv/bin/python" -m pip install -q "$src"
read -r hits1 misses1 _ <<< "$(ccache_counts) 0 0"
echo "pip install: $(( $(date +%s) - start )) s; ccache: $((hits1 - hits0)) hits, $((misses1 - misses0)) misses"

"$t/venv/bin/kforge" --version
"$t/venv/bin/python" -c 'import kforge_py, sys; print("kforge_py from", kforge_py.__file__)'
test -f "$t/venv/share/kforge/kernels/cstdint.cuh"
if readelf -d "$t/venv/bin/kforge" | grep -E 'NEEDED.*(libcudart|libcublas|libnvrtc|libnvidia-ml)'; then
    echo "FAIL: the wheel's kforge links CUDA libraries at start-up" >&2
    exit 1
fi

# From the venv alone: the source tree (and its .venv, build/) hidden under an empty tmpfs.
mkdir -p "$t/work"
cp "$src/problems/row_sum_f32.json" "$src/problems/row_sum_f32.kf" "$t/work/"
ns=(unshare -m)
[ "$(id -u)" = 0 ] || ns=(unshare -r -m)
"${ns[@]}" env -u KFORGE_HOME -u KFORGE_CUTLASS_DIR -u KFORGE_PYTHON PATH="$t/venv/bin:$PATH" \
    KFORGE_CACHE_DIR="$t/cache" sh -ec "
    mount -t tmpfs none '$src'
    cd '$t/work'
    kforge check row_sum_f32.json
    kforge compile row_sum_f32.json row_sum_f32.kf -o out/
    ls out/*.cubin
    python -c 'import kforge_py'
"
echo "PASS: pip install gives kforge and kforge_py"
