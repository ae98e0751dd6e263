#!/usr/bin/env bash
# Builds .carry/ - what a device call carries to the H200 machine besides the working tree (see
# bench/NOTES.md): the kforge CLI and the GPU tests of a local build (GPU_TESTS), stripped, with the
# shared libraries they link that the H200 machine's image lacks, and a wrapper that sets the
# library path. The image's own CUDA, glibc, libstdc++ and libgcc are used there: carrying this
# machine's (older) libstdc++ broke every host library compiled there (GLIBCXX_3.4.32 not found,
# 2026-12-01).
#   bash bench/lib/make_carry.sh [BUILD_DIR]      (default build/release; builds the two targets)
set -euo pipefail
R=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$R/build/release}
# the GPU tests carried (tests/<stage>/<name>: test_<stage>_...)
# The CUTLASS compile tests below run here on the GPU machine's 16 cores: CI (2 cores) runs one
# CUTLASS compile (GemmCompile.BiasReluBf16BuildsCubinAndHostLibrary) and leaves the other heavy
# ones to this carry (the ci test preset in CMakePresets.json excludes them by name).
GPU_TESTS=(tests/reference/test_reference_gpu tests/codegen/test_codegen_conv_gpu
    tests/device/test_device_cuda_gpu tests/eval/test_eval_fault_suite_gpu
    tests/eval/test_eval_gpu_reference_pipeline
    tests/codegen/test_codegen_gemm_compile tests/codegen/test_codegen_gemm_stage_compile
    tests/codegen/test_codegen_let_value_compile tests/eval/test_eval_precompile
    tests/search/test_search_free_knobs_gpu)
cmake --build "$B" --target kforge_cli "${GPU_TESTS[@]##*/}"
C=$R/.carry
rm -rf "$C" && mkdir -p "$C/bin" "$C/lib"
strip -o "$C/bin/kforge.real" "$B/cli/kforge"
bins=("$B/cli/kforge")
for t in "${GPU_TESTS[@]}"; do
    strip -o "$C/bin/${t##*/}" "$B/$t"
    bins+=("$B/$t")
done
cat > "$C/bin/kforge" <<'WRAP'
#!/usr/bin/env bash
# Runs the carried kforge build with its carried libraries.
d="$(dirname "$(readlink -f "$0")")"  # also when started through a symbolic link
export LD_LIBRARY_PATH="$d/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec "$d/kforge.real" "$@"
WRAP
chmod +x "$C/bin/kforge"
for bin in "${bins[@]}"; do
    ldd "$bin" | awk '$3 ~ /^\// { print $3 }'
done | sort -u | while read -r lib; do
    case "$lib" in
        /usr/local/cuda*) ;;  # the image's CUDA
        */libc.so*|*/libm.so*|*/libpthread.so*|*/libdl.so*|*/librt.so*|*/libresolv.so*) ;;
        */ld-linux*|*/libstdc++.so*|*/libgcc_s.so*) ;;
        *) cp -L "$lib" "$C/lib/" ;;
    esac
done
"$C/bin/kforge" --version > /dev/null
echo "make_carry: $(du -sh "$C" | cut -f1) in $C ($(ls "$C/lib" | wc -l) libraries)"
# The device call carries at most 64 MiB (working tree + carry): .carry and the CUTLASS headers
# together passed that in session 12 (~58 MiB + the tree). PACK=1 packs both into .carry.tar.xz
# (~10 MiB); carry [".carry.tar.xz"] and start the command with `tar xJf .carry.tar.xz`.
if [ "${PACK:-0}" = 1 ]; then
    V=.venv/lib/python3.11/site-packages/cutlass_library/source
    (cd "$R" && tar cJf .carry.tar.xz .carry "$V/include" "$V/tools/util/include" \
        "$V/examples/88_hopper_fmha" "$V/examples/41_fused_multi_head_attention")
    echo "make_carry: packed $(du -sh "$R/.carry.tar.xz" | cut -f1) in $R/.carry.tar.xz"
fi
