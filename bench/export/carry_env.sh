# Sourced by bench/export/run.sh and gemm_gap.sh, from the repository root on the GPU machine
# with the carry unpacked (bash bench/export/make_carry.sh here, then tar xJf .carry.tar.xz):
# sets R (the root), K (the carry's kforge), RTLIB (its libkforge_runtime.so), links the build
# tree the binary names to R, and exports what kforge and the exported packages read there. A
# missing carry ends the calling script (exit 3).
R=$PWD
K=$R/.carry/bin/kforge
RTLIB=$R/.carry/lib/libkforge_runtime.so
[ -x "$K" ] || { echo "$0: $K missing (bash bench/export/make_carry.sh here first)"; exit 3; }
[ -e "$RTLIB" ] || { echo "$0: $RTLIB missing"; exit 3; }
. "$R/bench/lib/link_build_tree.sh"
kforge_link_build_tree "$K" "$R"
# GPU tests that start a worker run the CLI of the build tree they were built in
for b in build/ci build/release; do mkdir -p "$R/$b/cli" && ln -sf "$R/.carry/bin/kforge" "$R/$b/cli/kforge"; done
export KFORGE_CACHE_DIR=/tmp/kforge-cache KFORGE_PYTHON=${KFORGE_PYTHON:-python3} KFORGE_HOME=$R
# one inductor compile worker per harness process: four processes' torch.compile warm-ups
# (outside the GPU lock) otherwise take every core while another times its host-bound calls
export TORCHINDUCTOR_COMPILE_THREADS=${TORCHINDUCTOR_COMPILE_THREADS:-1}
export PYTHONPATH="$R/python${PYTHONPATH:+:$PYTHONPATH}"
# the exported ops' compiled kernel (kforge_torch) is built against this machine's torch by the
# first package import, cached here (one cache for every script on a warm machine); ninja from
# the carry where the machine has none
export KFORGE_TORCH_EXT_CACHE=${KFORGE_TORCH_EXT_CACHE:-/tmp/kforge-export/torch_ext}
command -v ninja > /dev/null || export PATH="$PATH:$R/.carry/bin"
