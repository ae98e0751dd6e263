#!/usr/bin/env bash
# .carry.tar.xz for bench/export/run.sh: bench/lib/make_carry.sh's carry (kforge, the GPU tests)
# plus libkforge_runtime.so and ninja, packed with the CUTLASS headers the exports compile against.
#   bash bench/export/make_carry.sh [BUILD_DIR]     (default build/ci)
set -euo pipefail
R=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$R/build/ci}
if command -v kbuild > /dev/null; then kbuild kforge_runtime_shared; else cmake --build "$B" --target kforge_runtime_shared; fi
PACK=0 bash "$R/bench/lib/make_carry.sh" "$B"
cp -L "$B/runtime/libkforge_runtime.so" "$R/.carry/lib/"
# ninja, which torch.utils.cpp_extension needs to build the exported ops' compiled kernel
# (kforge_torch) against the GPU machine's torch; run.sh uses it only where that has none
command -v ninja > /dev/null && cp -L "$(command -v ninja)" "$R/.carry/bin/"
V=.venv/lib/python3.11/site-packages/cutlass_library/source
(cd "$R" && tar cJf .carry.tar.xz .carry "$V/include" "$V/tools/util/include" \
        "$V/examples/88_hopper_fmha" "$V/examples/41_fused_multi_head_attention")
echo "make_carry: packed $(du -sh "$R/.carry.tar.xz" | cut -f1) in $R/.carry.tar.xz"
