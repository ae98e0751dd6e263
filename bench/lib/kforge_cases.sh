# Sourced by the GPU check scripts under bench/kernels (rowwise_check.sh, tf32_check.sh,
# tf32_staged_check.sh, epilogue_cost/run.sh).
#
#   kforge_default_binary REPO_ROOT
#       sets K to the carried build (.carry/bin/kforge) or else the first build/*/cli/kforge,
#       unless K is already set; returns 1 when there is none.
#   kforge_bench_setup REPO_ROOT
#       K, the build-tree link and DEVICE (below).
#   kforge_precompile DIR DEVICE CASE...
#       CASE is "NAME|PROBLEM_JSON|PROGRAM". Lowers each program (kforge compile --no-build:
#       DIR/NAME.lowered with kernels.cu and plan.json, DIR/NAME.lower.txt; a refused program
#       prints why), then compiles all of them JOBS (8) at a time through `kforge eval --tier
#       compile` (DIR/NAME.compile.json), so the evaluations after it are served by the cache.
kforge_default_binary() {
    if [ -z "${K:-}" ]; then
        K=$1/.carry/bin/kforge
        [ -x "$K" ] || K=$(ls "$1"/build/*/cli/kforge 2>/dev/null | head -1)
    fi
    [ -n "$K" ] && [ -x "$K" ]
}

# kforge_bench_setup REPO_ROOT: the binary (K, as kforge_default_binary; exits 2 when there is
# none), the build-tree link the carried binary needs (link_build_tree.sh) and DEVICE (default
# cuda) - the common start of the GPU scripts under bench/kernels.
kforge_bench_setup() {
    kforge_default_binary "$1" || { echo "no kforge binary (set K)" >&2; exit 2; }
    . "$1/bench/lib/link_build_tree.sh"
    kforge_link_build_tree "$K" "$1"
    DEVICE=${DEVICE:-cuda}
}

kforge_precompile() {
    local dir=$1 device=$2 c name spec prog
    shift 2
    for c in "$@"; do
        IFS='|' read -r name spec prog <<< "$c"
        "$K" compile "$prog" --problem "$spec" -o "$dir/$name.lowered" --no-build \
            > "$dir/$name.lower.txt" 2>&1 ||
            { echo "$name: kforge compile --no-build failed:"; cat "$dir/$name.lower.txt"; }
    done
    printf '%s\n' "$@" | xargs -d '\n' -n 1 -P "${JOBS:-8}" bash -c '
        IFS="|" read -r name spec prog <<< "$3"
        "$0" eval --device "$2" --tier compile --problem "$spec" --program "$prog" \
            --json > "$1/$name.compile.json" 2>&1' "$K" "$dir" "$device"
}
