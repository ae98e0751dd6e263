#!/usr/bin/env bash
# Installs every dependency of kforge on a fresh Debian 12 machine (root or sudo).
# Debian packages for the C++ side, a project-local virtual environment (.venv) for the
# Python side and for the CUTLASS C++ headers (shipped inside the pinned nvidia-cutlass wheel).
# Safe to run again: every step is idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

KFORGE_CUTLASS_VERSION="4.2.0.0"   # newest nvidia-cutlass on PyPI; builds with CUDA 13.0 (see bench/NOTES.md)

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

apt_packages=(
    build-essential cmake ninja-build pkg-config git python3-venv ccache util-linux tmux
    clang libclang-rt-14-dev lld
    libsqlite3-dev sqlite3
    libssl-dev nlohmann-json3-dev libcli11-dev libcurl4-openssl-dev libcpp-httplib-dev
    libgtest-dev googletest
    chromium
)
missing=()
for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing Debian packages: ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "setup: warning: the CUDA toolkit (nvcc) is not installed; kforge needs CUDA 13 (nvcc, NVRTC, cuBLAS)" >&2
fi

PY=${KFORGE_PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q "nvidia-cutlass==${KFORGE_CUTLASS_VERSION}" numpy
# The official MCP Python SDK: the real client of `kforge mcp` in tests/mcp and bench/mcp.
.venv/bin/python -m pip install -q "mcp==2.3.0"
if [ "${KFORGE_WITH_TORCH:-1}" != 0 ]; then  # python/ (import, baselines); ~3 min, +5.3 GB
    .venv/bin/python -m pip install -q "torch==2.15.0" "einops==0.8.1"  # einops: KernelBench L3 Mamba2
fi
inc=$(.venv/bin/python -c 'import cutlass_library, os; print(os.path.join(os.path.dirname(cutlass_library.__file__), "source", "include"))')
test -f "$inc/cutlass/cutlass.h" || { echo "setup: CUTLASS headers not found under $inc" >&2; exit 1; }
echo "setup: done (CUTLASS ${KFORGE_CUTLASS_VERSION} headers at $inc)"
