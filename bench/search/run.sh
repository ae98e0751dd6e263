#!/usr/bin/env bash
# The search benchmark (issue 6): `kforge optimize` on each named problem at a fixed wall budget,
# with the built-in proposers (diagnosis,parameter) and, on request, the same budget with the
# random proposer and with the parameter proposer alone, each mode into its own store so that no
# run reuses another's evaluation cache. bench/search/README.md has the device calls.
#
# usage: bash bench/search/run.sh [--random] [--param-only] [--no-builtin] [--baseline] PROBLEM...
#   PROBLEM        name in problems/ (problems/NAME.json), or a path to a spec
#   --random       also run `--proposers random` at the same budget   (store random.db)
#   --param-only   also run `--proposers parameter` at the same budget (store param.db)
#   --no-builtin   skip the diagnosis,parameter run                    (store search.db)
#   --baseline     first time PyTorch eager and torch.compile max-autotune of each problem with
#                  `kforge baseline` (store baseline.db; needs python3 with torch)
# Runs go problem by problem (builtin, random, parameter-only), so a problem cut short by the
# total time loses all its modes rather than leaving unpaired runs.
#
# environment:
#   DEVICE=cuda      kforge --device (sim: the simulated device, for testing; its times are the
#                    analytic model's, never measurements)
#   BUDGET_S=120     --budget-wall of each run (the start program's evaluation comes before it)
#   TOTAL_S=540      wall limit of the whole script: a run that does not fit is skipped and said
#                    so; a run still going at its cap is killed (its store rows stay, marked
#                    'running', and summarize.py reports it as cut)
#   OVERRUN_S=180    how far past its budget a run may go (start evaluation, last round, outputs)
#   EST_OVERHEAD_S=40  expected time beyond BUDGET_S per run, used to decide what fits
#   BASELINE_S=150   time reserved per problem for --baseline (max-autotune tunes for minutes)
#   RESERVE_S=15     kept at the end for summarizing and packing
#   KFORGE=.carry/bin/kforge  the binary;  OUT=/tmp/kforge-out  where results go
#   TAG=<UTC time>   results go to $OUT/search-$TAG/, packed into $OUT/search-$TAG.tar.gz
#   PACK=1           0 leaves the folder unpacked
#   START=seed       where each run starts: seed = kforge's own seed program, synthesized from the
#                    spec as on a problem it has never seen (the spec is copied to a folder with
#                    no .kf beside it); hand = the hand-written problems/NAME.kf beside the spec
#                    (the suite's tuned programs: little headroom left for the search to show)
#   CACHE=per-run    compile cache (KFORGE_CACHE_DIR) fresh for each run, so no run is served
#                    compilations another run paid for; "shared" shares one (faster, biased)
set -uo pipefail
T0=$(date +%s)
R0=$PWD
modes=(builtin); baseline=0
problems=()
while [ $# -gt 0 ]; do
    case "$1" in
        --random) modes+=(random) ;;
        --param-only) modes+=(param) ;;
        --no-builtin) modes=("${modes[@]/builtin}") ;;
        --baseline) baseline=1 ;;
        -h|--help) sed -n 2,31p "$0"; exit 0 ;;
        -*) echo "run.sh: unknown flag $1" >&2; exit 2 ;;
        *) problems+=("$1") ;;
    esac
    shift
done
[ ${#problems[@]} -gt 0 ] || { echo "run.sh: name at least one problem (see --help)" >&2; exit 2; }
DEVICE=${DEVICE:-cuda}
BUDGET_S=${BUDGET_S:-120}; TOTAL_S=${TOTAL_S:-540}; OVERRUN_S=${OVERRUN_S:-180}
EST_OVERHEAD_S=${EST_OVERHEAD_S:-40}; BASELINE_S=${BASELINE_S:-150}; RESERVE_S=${RESERVE_S:-15}
K=${KFORGE:-$R0/.carry/bin/kforge}
O=${OUT:-/tmp/kforge-out}; mkdir -p "$O"
TAG=${TAG:-$(date -u +%Y%m%dT%H%M%SZ)}
R=$O/search-$TAG; mkdir -p "$R/logs"
CACHE=${CACHE:-per-run}
START=${START:-seed}
case "$START" in seed|hand) ;; *) echo "run.sh: START must be seed or hand, not $START" >&2; exit 2 ;; esac
[ -x "$K" ] || { echo "run.sh: no kforge binary at $K (set KFORGE)" >&2; exit 3; }
"$K" --version > "$R/kforge-version.txt" 2>&1 || { echo "run.sh: $K does not start" >&2; exit 3; }
if [ "$DEVICE" = cuda ]; then
    . "$R0/bench/lib/link_build_tree.sh"
    kforge_link_build_tree "$K" "$R0"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw,power.limit --format=csv > "$R/gpu.txt" 2>&1
fi
elapsed() { echo $(( $(date +%s) - T0 )); }
left() { echo $(( TOTAL_S - RESERVE_S - $(elapsed) )); }
manifest=$R/manifest.jsonl
note() {  # problem mode store status rc wall_s cap_s message
    printf '{"problem":"%s","mode":"%s","db":"%s","device":"%s","budget_s":%s,"start":"%s","status":"%s","rc":%s,"wall_s":%s,"cap_s":%s,"message":"%s"}\n' \
        "$1" "$2" "$3" "$DEVICE" "$BUDGET_S" "$START" "$4" "$5" "$6" "$7" "$8" >> "$manifest"
}
{
    echo "search benchmark $TAG: device $DEVICE, budget ${BUDGET_S}s per run, total ${TOTAL_S}s"
    echo "modes: ${modes[*]}  start: $START  baseline: $baseline  cache: $CACHE  kforge: $(cat "$R/kforge-version.txt")"
    echo "problems: ${problems[*]}"
} | tee "$R/log.txt"
spec_of() { case "$1" in */*|*.json) echo "$1" ;; *) echo "problems/$1.json" ;; esac; }

if [ $baseline = 1 ]; then
    for p in "${problems[@]}"; do
        spec=$(spec_of "$p"); n=$(basename "$spec" .json)
        if [ "$(left)" -lt "$BASELINE_S" ]; then
            echo "SKIP baseline $n: $(left)s left, $BASELINE_S s needed" | tee -a "$R/log.txt"
            note "$n" baseline baseline.db skipped 0 0 0 "does not fit in TOTAL_S"; continue
        fi
        s=$(date +%s); cap=$(left); [ "$cap" -ge 1 ] || cap=1
        KFORGE_PYTHON=${KFORGE_PYTHON:-python3} timeout -k 10 "$cap" "$K" baseline "$spec" \
            --modes eager,compile_max_autotune --db "$R/baseline.db" --json \
            > "$R/logs/$n-baseline.json" 2> "$R/logs/$n-baseline.err"
        rc=$?; w=$(( $(date +%s) - s ))
        st=ran; [ $rc -eq 0 ] || st=failed; { [ $rc -eq 124 ] || [ $rc -eq 137 ]; } && st=killed
        echo "baseline $n rc=$rc ${w}s ($st)" | tee -a "$R/log.txt"
        note "$n" baseline baseline.db $st $rc $w "$cap" "$(tail -c 300 "$R/logs/$n-baseline.err" | tr -d '"\\\n' )"
    done
fi

for p in "${problems[@]}"; do
    spec=$(spec_of "$p"); n=$(basename "$spec" .json)
    [ -f "$spec" ] || { echo "SKIP $n: no spec $spec" | tee -a "$R/log.txt"; continue; }
    if [ "$START" = seed ]; then  # no .kf beside the copy: kforge optimize synthesizes the start
        mkdir -p "$R/specs" && cp "$spec" "$R/specs/$n.json" && spec=$R/specs/$n.json
    fi
    for m in "${modes[@]}"; do
        [ -n "$m" ] || continue
        case $m in
            builtin) db=search.db; props=diagnosis,parameter; prof=2 ;;
            random) db=random.db; props=random; prof=0 ;;
            param) db=param.db; props=parameter; prof=0 ;;
        esac
        need=$(( BUDGET_S + EST_OVERHEAD_S ))
        if [ "$(left)" -lt "$need" ]; then
            echo "SKIP $n $m: $(left)s left of TOTAL_S=$TOTAL_S, a run needs ~${need}s" | tee -a "$R/log.txt"
            note "$n" "$m" $db skipped 0 0 0 "does not fit in TOTAL_S"; continue
        fi
        cap=$(( BUDGET_S + OVERRUN_S )); [ "$cap" -le "$(left)" ] || cap=$(left)
        [ "$cap" -ge 1 ] || cap=1  # timeout 0 would mean no limit
        if [ "$CACHE" = shared ]; then export KFORGE_CACHE_DIR=/tmp/kforge-cache
        else export KFORGE_CACHE_DIR=/tmp/kforge-search-cache/$TAG/$n-$m; fi
        mkdir -p "$KFORGE_CACHE_DIR"
        s=$(date +%s.%N)
        timeout -k 10 "$cap" "$K" optimize "$spec" --device "$DEVICE" --budget-wall "$BUDGET_S" \
            --db "$R/$db" --out "$R/$n-$m" --proposers "$props" --profile-top "$prof" > "$R/logs/$n-$m.log" 2>&1
        rc=$?; w=$(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
        st=ran; { [ $rc -eq 124 ] || [ $rc -eq 137 ]; } && st=killed
        # A killed kforge leaves its worker (own process group) to notice the closed pipe.
        [ $st = killed ] && sleep 5
        echo "$n $m rc=$rc ${w}s ($st) $(grep -m1 '^best:' "$R/logs/$n-$m.log" | cut -c1-110)" | tee -a "$R/log.txt"
        note "$n" "$m" $db $st $rc "$w" "$cap" "$(grep -m1 '^stopped:' "$R/logs/$n-$m.log" | tr -d '"\\')"
        [ "$CACHE" = shared ] || rm -rf "$KFORGE_CACHE_DIR"
    done
done

dbs=$(ls "$R"/*.db 2>/dev/null)
if [ -n "$dbs" ] && command -v python3 > /dev/null; then
    KFORGE=$K timeout 30 python3 "$R0/bench/search/summarize.py" --budget "$BUDGET_S" \
        --out-dir "$R/summary" $dbs > "$R/summary.md" 2> "$R/summary.err"
    echo "summarize rc=$? ($R/summary.md)" | tee -a "$R/log.txt"
    grep -E '^\| (target|geomean)|^- ' "$R/summary.md" | head -20
fi
[ "$DEVICE" = cuda ] && nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> "$R/gpu.txt" 2>&1
echo "total ${TOTAL_S}s limit, used $(elapsed)s" | tee -a "$R/log.txt"
if [ "${PACK:-1}" = 1 ]; then
    tar -czf "$O/search-$TAG.tar.gz" -C "$O" "search-$TAG" && rm -rf "$R" &&
        echo "packed: $O/search-$TAG.tar.gz ($(du -h "$O/search-$TAG.tar.gz" | cut -f1))"
fi
