# The specs of a suite of at least 30 problems (issue 27's benchmark suite, as bench/suite_cold's):
# the KernelBench-format examples (examples/kernelbench/*.py) imported with `kforge import
# kernelbench`, topped up with the built-in problems/ specs, N in all, the specs only (every start
# program is synthesized by the fusion planner, as an import's is). Made once per machine into
# $W/specs (kept between device calls: $W/specs.ok), the list in $W/specs.txt.
#
# usage: . bench/lib/suite_specs.sh; suite_specs KFORGE REPO W N STEPS_FILE
suite_specs() {
    local K=$1 R=$2 W=$3 N=$4 steps=$5
    [ -f "$W/specs.ok" ] && return 0
    rm -rf "$W/imported" "$W/specs" && mkdir -p "$W/imported" "$W/specs"
    local s=$SECONDS
    "$K" import kernelbench "$R"/examples/kernelbench/*.py -o "$W/imported" > "$W/import.log" 2>&1
    echo "import rc=$? wall_s=$((SECONDS - s)) specs=$(ls "$W/imported" | wc -l)" >> "$steps"
    # a failed import may leave its spec for inspection: not part of the suite
    grep '^FAILED:' "$W/import.log" | sed -n 's/.*(spec written to \(.*\.json\)).*/\1/p' |
        while read -r f; do rm -f "$f"; done
    local n=0 f b
    # examples in their numeric order (01, 02, ... 31, then 32 and up: 100 is not between 10
    # and 11), so that examples added later do not change which problems a suite of N holds
    for f in $(ls "$W"/imported/*.json 2>/dev/null | sort -V) "$R"/problems/*.json; do
        [ -f "$f" ] || continue
        [ $n -ge "$N" ] && break
        b=$(basename "$f")
        [ -e "$W/specs/$b" ] && continue
        cp "$f" "$W/specs/$b"
        n=$((n + 1))
    done
    ls "$W/specs" > "$W/specs.txt"
    touch "$W/specs.ok"
}
