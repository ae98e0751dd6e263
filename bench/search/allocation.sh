#!/usr/bin/env bash
# Issue 27's suite comparisons, one `kforge suite` per mode on the same N-problem suite (the
# imported KernelBench examples topped up with problems/ specs: bench/lib/suite_specs.sh), the
# same --budget-wall and --seed, each on an empty compile cache and into its own store:
#   sol      built-in proposers, SOL-headroom allocation (--allocation sol) WITH the stopping
#            rules (--within-sol WITHIN_SOL --patience PATIENCE): the freed budget goes to the
#            other problems
#   uniform  built-in proposers, uniform allocation (--allocation uniform: fewest rounds first),
#            no stopping rules
#   random   --proposers random, uniform allocation, no stopping rules
#   param    --proposers parameter, uniform allocation, no stopping rules
# Comparison 1 is sol vs uniform (GPU-seconds and wall seconds to reach 95% of the final geomean
# speedup over the start programs); comparison 2 is uniform vs random vs param (per problem and
# geomean at equal budget, anytime curves). bench/search/allocation_table.py makes the tables,
# curves.csv and curves.png from the stores of one or more calls (seeds).
#
# usage (repository root on the GPU machine, the carried binary as bench/suite_cold/run.sh uses):
#   MODES="sol" SEED=1 bash bench/search/allocation.sh           (one mode per call at 420 s)
#   python3 bench/search/allocation_table.py DIR...               (merges calls: modes, seeds)
# environment: KFORGE (.carry/bin/kforge), DEVICE (cuda; sim: a dry run, model times, nothing
#   compiled), MODES ("sol uniform"), SEED (1), N (31), BUDGET_S (420: the suite's --budget-wall),
#   WITHIN_SOL (5), PATIENCE (3), TOTAL_S (540: a mode that does not fit what is left is skipped
#   and said so; each suite is capped at BUDGET_S + 60), WORK (/tmp/kforge-alloc: the specs,
#   kept between calls), OUT (/tmp/kforge-out), TAG (UTC time), WARM (0: every suite on an empty
#   compile cache; 1: every suite on a copy of one compile cache warmed once per machine by
#   `kforge suite --rounds 1 --budget-wall WARM_S` (300) - the start programs and first-round
#   proposals compiled, so that a suite's budget goes to its rounds; the same for every mode).
#   Results: $OUT/alloc-$TAG/ (<mode>-s<seed>.db and .log, runs.jsonl, table.md, curves.csv,
#   curves.png).
set -uo pipefail
T0=$SECONDS
R=$PWD
O=${OUT:-/tmp/kforge-out}
TAG=${TAG:-$(date -u +%Y%m%dT%H%M%SZ)}
D=$O/alloc-$TAG
mkdir -p "$D"
K=${KFORGE:-$R/.carry/bin/kforge}
if [ -e "$R/.carry/bin/kforge" ] && [ -f "$R/bench/lib/link_build_tree.sh" ]; then
    . "$R/bench/lib/link_build_tree.sh"
    kforge_link_build_tree "$R/.carry/bin/kforge" "$R"
fi
[ -x "$K" ] || { echo "allocation.sh: no kforge binary at $K (set KFORGE)" >&2; exit 3; }
[ -n "${KFORGE_PYTHON:-}" ] || [ -x "$R/.venv/bin/python" ] || export KFORGE_PYTHON=python3
DEVICE=${DEVICE:-cuda}
MODES=${MODES-sol uniform}  # MODES="" with WARM=1: only the import and the warm cache
SEED=${SEED:-1}; N=${N:-31}; BUDGET_S=${BUDGET_S:-420}; TOTAL_S=${TOTAL_S:-540}
WITHIN_SOL=${WITHIN_SOL:-5}; PATIENCE=${PATIENCE:-3}
W=${WORK:-/tmp/kforge-alloc}
mkdir -p "$W"
for m in $MODES; do
    case $m in sol|uniform|random|param) ;; *) echo "allocation.sh: unknown mode $m" >&2; exit 2 ;; esac
done
"$K" --version > "$D/kforge-version.txt" 2>&1
[ "$DEVICE" = cuda ] && nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > "$D/gpu.txt" 2>&1
if [ -n "${SPECS_DIR:-}" ]; then  # a dry run's small suite: the first N specs of a folder
    rm -rf "$W/specs" && mkdir -p "$W/specs"
    ls "$SPECS_DIR"/*.json | head -n "$N" | xargs -I{} cp {} "$W/specs/"
    ls "$W/specs" > "$W/specs.txt"
else
    . "$R/bench/lib/suite_specs.sh"
    suite_specs "$K" "$R" "$W" "$N" "$D/steps.txt"
fi
cp "$W/specs.txt" "$D/specs.txt"
WARM=${WARM:-0}; WARM_S=${WARM_S:-300}
echo "allocation $TAG: device $DEVICE, modes $MODES, seed $SEED, $(wc -l < "$W/specs.txt") problems, budget ${BUDGET_S}s, warm $WARM" |
    tee "$D/log.txt"
if [ "$WARM" = 1 ] && [ ! -f "$W/warm-cache.ok" ]; then
    rm -rf "$W/warm-cache" && mkdir -p "$W/warm-cache"
    s=$SECONDS
    KFORGE_CACHE_DIR=$W/warm-cache timeout --kill-after=10 $((WARM_S + 60)) "$K" suite "$W/specs" \
        --device "$DEVICE" --budget-wall "$WARM_S" --rounds 1 --db "$W/warm.db" --progress plain \
        > "$D/warm.log" 2>&1
    rc=$?
    echo "warm cache rc=$rc $((SECONDS - s))s ($(ls "$W/warm-cache" | wc -l) entries)" | tee -a "$D/log.txt"
    [ $rc -eq 0 ] || [ $rc -eq 1 ] && touch "$W/warm-cache.ok"
fi

for m in $MODES; do
    left=$((TOTAL_S - (SECONDS - T0)))
    if [ $left -lt $((BUDGET_S + 20)) ]; then
        echo "SKIP $m: ${left}s left of TOTAL_S=$TOTAL_S, a suite needs ~$((BUDGET_S + 20))s" | tee -a "$D/log.txt"
        continue
    fi
    cap=$((BUDGET_S + 60)); [ $cap -le $left ] || cap=$left
    case $m in
        sol) flags=(--allocation sol --within-sol "$WITHIN_SOL" --patience "$PATIENCE") ;;
        uniform) flags=(--allocation uniform) ;;
        random) flags=(--allocation uniform --proposers random --profile-top 0) ;;
        param) flags=(--allocation uniform --proposers parameter --profile-top 0) ;;
    esac
    name=$m-s$SEED
    cache=$W/cache-$name
    rm -rf "$cache" "$D/$name.db"* && mkdir -p "$cache"
    [ "$WARM" = 1 ] && [ -f "$W/warm-cache.ok" ] && cp -a "$W/warm-cache/." "$cache/"
    s=$(date +%s.%N)
    KFORGE_CACHE_DIR=$cache timeout --kill-after=10 "$cap" "$K" suite "$W/specs" --device "$DEVICE" \
        --budget-wall "$BUDGET_S" --seed "$SEED" --db "$D/$name.db" --progress plain "${flags[@]}" \
        > "$D/$name.log" 2>&1
    rc=$?
    wall=$(python3 -c "import sys,time; print(round(time.time() - float(sys.argv[1]), 1))" "$s")
    rm -rf "$cache"
    printf '{"mode":"%s","seed":%s,"rc":%s,"wall_s":%s,"budget_s":%s,"device":"%s","warm":%s,"db":"%s.db"}\n' \
        "$m" "$SEED" "$rc" "$wall" "$BUDGET_S" "$DEVICE" "$WARM" "$name" >> "$D/runs.jsonl"
    echo "$name rc=$rc ${wall}s: $(grep -c ' round [0-9]*:' "$D/$name.log") round lines, $(tail -1 "$D/$name.log" | cut -c1-120)" |
        tee -a "$D/log.txt"
done
python3 "$R/bench/search/allocation_table.py" --csv "$D/curves.csv" "$D" \
    > "$D/table.md" 2> "$D/table.err"
echo "allocation_table rc=$? ($D/table.md)" | tee -a "$D/log.txt"
cat "$D/table.md"
