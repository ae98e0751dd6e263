#!/usr/bin/env bash
# Issue 32 on the GPU: a suite on a cold machine. 31 problems - the KernelBench-format examples
# (examples/kernelbench/*.py) imported with `kforge import kernelbench`, topped up with the
# built-in problems/ specs (their specs only, so every start program is synthesized by the
# fusion planner, as an import's is) - run by `kforge suite --device cuda` on an EMPTY compile
# cache:
#   b120   --budget-wall 120 must end within 130 s, every problem either timed in the start phase
#          ("start P: compiled in ...") or listed as not reached
#   b600   --budget-wall 600: every problem gets at least one search round ("P round 1:")
# A device call runs 10 minutes at most, so b600 runs in the background on the warm machine:
# PHASE=b600 starts it and returns, PHASE=b600_wait waits for it (call it again if it returns
# "still running") and checks it. Results under $OUT: specs.txt, <phase>.log (the suite's
# output), <phase>.check (PASS/FAIL lines), <phase>.db (the store), steps.txt.
#
# usage (from the repository root, the carried binary as bench/structure/gpu_check.sh uses it):
#   PACK=1 bash bench/lib/make_carry.sh build/ci         (here, once)
#   PHASE=b120 bash bench/suite_cold/run.sh              (device call 1, ~4 min: import + b120)
#   PHASE=b600 bash bench/suite_cold/run.sh              (device call 2: starts b600, returns)
#   PHASE=b600_wait bash bench/suite_cold/run.sh         (device calls 3..: until it says done)
# environment: KFORGE (.carry/bin/kforge), KFORGE_PYTHON (python3 with torch: the import),
#   N (31 problems), DEVICE (cuda; sim for a dry run), B600 (600: the long phase's budget), WORK (/tmp/kforge-suite-cold: specs and the background run between calls).
set -uo pipefail
R=$PWD
O=${OUT:-/tmp/kforge-out}
mkdir -p "$O"
K=${KFORGE:-$R/.carry/bin/kforge}
if [ -e "$R/.carry/bin/kforge" ] && [ -f "$R/bench/lib/link_build_tree.sh" ]; then
    . "$R/bench/lib/link_build_tree.sh"
    kforge_link_build_tree "$R/.carry/bin/kforge" "$R"
fi
[ -n "${KFORGE_PYTHON:-}" ] || [ -x "$R/.venv/bin/python" ] || export KFORGE_PYTHON=python3
N=${N:-31}
DEVICE=${DEVICE:-cuda}   # sim: a dry run of the script here (model times, nothing compiled)
W=${WORK:-/tmp/kforge-suite-cold}
PHASE=${PHASE:-b120}
mkdir -p "$W"

# The 31 specs, made once per machine (kept in $W between device calls).
. "$R/bench/lib/suite_specs.sh"
make_specs() { suite_specs "$K" "$R" "$W" "$N" "$O/steps.txt"; }

# check LOG BUDGET LIMIT_S WALL_S RC: the phase's PASS/FAIL lines
check() {
    local log=$1 budget=$2 limit=$3 wall=$4 rc=$5 name f missing=0 roundless=0
    echo "suite rc=$rc wall_s=$wall budget_s=$budget"
    if [ "$wall" -le "$limit" ]; then echo "PASS ended in ${wall} s <= ${limit} s"
    else echo "FAIL ended in ${wall} s > ${limit} s"; fi
    for f in $(cat "$W/specs.txt"); do
        name=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["name"])' "$W/specs/$f")
        if ! grep -q "^start $name: \(compiled\|NVRTC\|nothing\|not reached\|compile failed\)" "$log" &&
           ! grep -q "^  $name (fusion plan" "$log"; then
            echo "FAIL $name: neither timed nor listed as not reached"; missing=$((missing + 1))
        fi
        if ! grep -q "^$name round 1:" "$log"; then roundless=$((roundless + 1)); fi
    done
    [ $missing -eq 0 ] && echo "PASS every problem timed or listed as not reached"
    echo "problems without a search round: $roundless"
    echo "compile failures: $(grep -c '^start .*: compile failed' "$log")"
    echo "bare compile_failed messages: $(grep -c 'compile_failed$' "$log")"
    echo "start lines: $(grep -c '^start .*: compiled in' "$log") compiled, $(grep -c '^start .*: not reached' "$log") not reached"
    if [ "$budget" -ge 600 ]; then
        [ $roundless -eq 0 ] && echo "PASS every problem got a search round" ||
            echo "FAIL $roundless problems got no search round"
    fi
}

# suite BUDGET NAME: the suite on an empty compile cache; writes $W/NAME.{log,db,wall,rc}
suite() {
    local budget=$1 name=$2
    rm -rf "$W/cache-$name" "$W/$name.db"* && mkdir -p "$W/cache-$name"
    local s
    s=$(date +%s.%N)
    KFORGE_CACHE_DIR="$W/cache-$name" timeout --kill-after=10 $((budget + 240)) \
        "$K" suite "$W/specs" --device "$DEVICE" --budget-wall "$budget" --db "$W/$name.db" \
        > "$W/$name.log" 2>&1
    echo $? > "$W/$name.rc"
    python3 -c "import sys,time; print(round(time.time() - float(sys.argv[1])))" "$s" > "$W/$name.wall"
}

collect() {  # collect NAME BUDGET LIMIT
    local name=$1
    cp "$W/$name.log" "$O/$name.log"; cp "$W/$name.db" "$O/$name.db" 2>/dev/null
    cp "$W/specs.txt" "$O/specs.txt"; cp "$W/import.log" "$O/import.log" 2>/dev/null
    check "$W/$name.log" "$2" "$3" "$(cat "$W/$name.wall")" "$(cat "$W/$name.rc")" | tee "$O/$name.check"
    # the plan, the first start lines and the last lines, for the notes
    { grep -m 40 -e '^start plan' -e '^  wave' -e '^  now' "$W/$name.log"; echo ...;
      grep '^start ' "$W/$name.log" | head -40; echo ...; tail -30 "$W/$name.log"; } > "$O/$name.excerpt"
}

case "$PHASE" in
    b120)
        make_specs
        suite 120 b120
        collect b120 120 130
        ;;
    b600)
        make_specs
        rm -f "$W/b600.done"
        # its own session, so that the end of this device call does not take it down
        setsid nohup bash -c "$(declare -f suite); K='$K' W='$W' DEVICE='$DEVICE'; suite ${B600:-600} b600; touch '$W/b600.done'" \
            > "$W/b600.nohup" 2>&1 < /dev/null &
        echo $! > "$W/b600.pid"
        echo "b600 started in the background (pid $!); run PHASE=b600_wait" | tee -a "$O/steps.txt"
        ;;
    b600_wait)
        for _ in $(seq 1 110); do
            [ -f "$W/b600.done" ] && break
            if ! kill -0 "$(cat "$W/b600.pid" 2>/dev/null)" 2>/dev/null && [ ! -f "$W/b600.done" ]; then
                echo "b600's background run is gone without finishing (a fresh machine?): run PHASE=b600 again"
                cp "$W/b600.log" "$O/b600.partial.log" 2>/dev/null
                exit 1
            fi
            sleep 5
        done
        if [ ! -f "$W/b600.done" ]; then
            echo "b600 still running ($(grep -c ' round ' "$W/b600.log") round lines so far); call again"
            tail -3 "$W/b600.log"
            exit 0
        fi
        collect b600 "${B600:-600}" $((${B600:-600} + 10))
        ;;
    *) echo "PHASE: b120, b600 or b600_wait" >&2; exit 2 ;;
esac
