# Sourced by the GPU benchmark scripts. A kforge binary holds the source and CUTLASS paths of the
# tree it was built from (compiled in); on the GPU machine the repository sits elsewhere, so
#   kforge_link_build_tree KFORGE REPO_ROOT
# makes /work/main and the binary's own build-tree path symbolic links to REPO_ROOT. KFORGE may
# be the .carry wrapper (its KFORGE.real is read) or the binary itself.
kforge_link_build_tree() {
    local real="$1" root="$2" built d
    [ -e "$1.real" ] && real="$1.real"
    built=$(strings "$real" 2>/dev/null |
        grep -m1 '/\.venv/lib/python3[.0-9]*/site-packages/cutlass_library/source/include' |
        sed 's#/\.venv/.*##')
    for d in /work/main $built; do
        mkdir -p "$(dirname "$d")" 2>/dev/null
        [ -e "$d" ] || ln -s "$root" "$d" 2>/dev/null || true
    done
}
