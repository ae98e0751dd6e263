#!/usr/bin/env bash
# kforge's hand-written suite programs (problems/P.kf) against PyTorch eager (= cuBLAS for plain
# GEMMs), torch.compile default and max-autotune, in ONE device call, interleaved:
#   per group of problems (--batch, default 1 problem), rounds r = 1..R of
#     A: kforge eval --tier full --device cuda --repeat REPEAT --json   (one per problem)
#     B: kforge baseline GROUP... --modes MODES --json                  (one per group)
# so A and B alternate (A B A B ...) and the H200's power-cap clock drift falls on both sides.
# Both sides: L2 flushed (2x L2) before every timed iteration, CUDA events, median of 100
# (ITERS), NVML SM clock / temperature / throttle reasons per sample. Everything goes under
# $OUT/run, packed at the end into $OUT/compare.tgz (with steps.tsv and skipped.txt beside it);
# bench/kernels/compare/table.py makes the table.
#
# usage: bash bench/kernels/compare/run.sh [--modes eager,compile_default,compile_max_autotune]
#            [--rounds 3] [--batch 1] [--no-prep] [--dry] PROBLEM...
#   PROBLEM   a name of problems/*.json (its program is problems/PROBLEM.kf); "all" = every one
#   --batch G problems per interleaving group: one Python/torch start per group and round
#             instead of per problem (cheap row-wise problems; see README.md)
#   --no-prep skip the parallel compile of the programs (tier compile, JOBS at once) at the start
#   --dry     print the plan (groups, steps, time estimates, what the guard would skip on
#             those estimates) and run nothing
# environment: OUT (/tmp/kforge-out)  TOTAL_S (540: whole-run guard; a step that is not
#   estimated to fit is skipped and listed in skipped.txt, a running one is cut off by timeout)
#   DEVICE (cuda | sim: sim evaluates kforge on the simulated device and runs the Python side
#   with its host-clock test mode: control-flow tests only, every number SIMULATED)
#   K (kforge binary; default .carry/bin/kforge, else build/*/cli/kforge)  KFORGE_PYTHON (python3)
#   REPEAT (kforge timings per round, 1)  ITERS (100)  JOBS (14)  RESERVE_S (20, kept for tar)
#   MAT_S (45: estimated first max-autotune compile of a GEMM problem, for the guard; ~20 s
#   measured on the H200 in session 11)
#   A_S (15: estimated first full-tier kforge eval of a problem whose program is compiled)
set -uo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$R"
modes=eager,compile_default,compile_max_autotune; rounds=3; batch=1; prep=1; dry=0; problems=()
while [ $# -gt 0 ]; do
    case "$1" in
        --modes) modes=${2:?--modes needs a value}; shift 2 ;;
        --rounds) rounds=${2:?--rounds needs a value}; shift 2 ;;
        --batch) batch=${2:?--batch needs a value}; shift 2 ;;
        --no-prep) prep=0; shift ;;
        --dry) dry=1; shift ;;
        -h|--help) sed -n 2,25p "$0"; exit 0 ;;
        -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
        all) problems+=($(ls problems/*.json | xargs -n1 basename | sed 's/\.json$//')); shift ;;
        *) problems+=("$1"); shift ;;
    esac
done
[ ${#problems[@]} -gt 0 ] || { echo "run.sh: name at least one problem (or all)" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --rounds must be a positive integer" >&2; exit 2; }
[[ $batch =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --batch must be a positive integer" >&2; exit 2; }
for m in ${modes//,/ }; do
    case "$m" in eager|compile_default|compile_max_autotune) ;;
        *) echo "run.sh: unknown mode $m (eager, compile_default, compile_max_autotune)" >&2; exit 2 ;;
    esac
done
for p in "${problems[@]}"; do
    [ -f "problems/$p.json" ] && [ -f "problems/$p.kf" ] ||
        { echo "run.sh: problems/$p.json or problems/$p.kf does not exist" >&2; exit 2; }
done
TOTAL_S=${TOTAL_S:-540}; DEVICE=${DEVICE:-cuda}; REPEAT=${REPEAT:-1}; ITERS=${ITERS:-100}
JOBS=${JOBS:-14}; RESERVE_S=${RESERVE_S:-20}; MAT_S=${MAT_S:-45}
A_S=${A_S:-15}
[ "$DEVICE" = cuda ] || [ "$DEVICE" = sim ] || { echo "run.sh: DEVICE must be cuda or sim" >&2; exit 2; }
# The device tool returns at most 8 files from $OUT: everything is written under $OUT/run, then
# packed into $OUT/compare.tgz; $OUT keeps only that, steps.tsv and skipped.txt, and the run
# folder moves to /tmp (KEEP_RUN_IN_OUT=1 leaves it in $OUT).
OUTROOT=${OUT:-/tmp/kforge-out}; O=$OUTROOT/run
rm -rf "$O"; mkdir -p "$O"
export KFORGE_CACHE_DIR=${KFORGE_CACHE_DIR:-/tmp/kforge-cache}
export KFORGE_PYTHON=${KFORGE_PYTHON:-python3}
# Inductor's caches (FX graphs, autotuning results) on the machine's disk: a later round or a
# later call on the same warm machine reuses the max-autotune search instead of repeating it.
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-/tmp/torchinductor-kforge}
if [ -z "${K:-}" ]; then
    K=$R/.carry/bin/kforge
    [ -x "$K" ] || K=$(ls -t "$R"/build/*/cli/kforge 2>/dev/null | head -1)
fi
start=$(date +%s)
dry_t=0  # --dry: the plan's own clock, advanced by each step's estimate
elapsed() { if [ $dry = 1 ]; then echo $dry_t; else echo $(( $(date +%s) - start )); fi; }
left() { echo $(( TOTAL_S - RESERVE_S - 10 - $(elapsed) )); }  # 10: timeout's -k grace
is_gemm() { grep -q '"op": *"\(matmul\|linear\|bmm\)"' "problems/$1.json"; }

# Time estimates (s) for a step never run before; later rounds use the last measured wall x1.2,
# but for B at most the estimate with max-autotune served from Inductor's cache (30 s a GEMM).
est_a_first() { if is_gemm "$1" && [ $prep = 0 ]; then echo 90; else echo "$A_S"; fi; }
est_b() {  # Python + torch start, then per problem and mode; $1: max-autotune cost of a GEMM
    local t=12 p m mat=$1; shift
    for p in "$@"; do
        for m in ${modes//,/ }; do
            case "$m" in
                eager) t=$((t + 3)) ;;
                compile_default) t=$((t + 10)) ;;
                compile_max_autotune) if is_gemm "$p"; then t=$((t + mat)); else t=$((t + mat / 4)); fi ;;
            esac
        done
    done
    echo $t
}

if [ $dry = 0 ]; then
    [ -n "$K" ] && [ -x "$K" ] || { echo "run.sh: no kforge binary (set K)" >&2; exit 3; }
    . "$R/bench/lib/link_build_tree.sh"
    kforge_link_build_tree "$K" "$R"
fi
last_wall=0; steps=$O/steps.tsv; skipped=$O/skipped.txt
: > "$skipped"
printf 'elapsed_s\tstep\tround\tproblems\trc\twall_s\tfile\tnvml_after\n' > "$steps"
{
    echo "date_utc: $(date -u +%FT%TZ)"; echo "device: $DEVICE"; echo "modes: $modes"
    echo "rounds: $rounds"; echo "batch: $batch"; echo "repeat: $REPEAT"; echo "iters: $ITERS"
    echo "total_s: $TOTAL_S"; echo "problems: ${problems[*]}"; echo "kforge: $K"
    echo "git: $(git rev-parse --short HEAD 2>/dev/null) $(git status --porcelain 2>/dev/null | wc -l) changed paths"
} > "$O/meta.txt"
# NVML's throttle-reason field is clocks_event_reasons.active in newer drivers,
# clocks_throttle_reasons.active in older ones: the first one this nvidia-smi knows.
reason_field=""
if [ "$DEVICE" = cuda ] && [ $dry = 0 ]; then
    for f in clocks_event_reasons.active clocks_throttle_reasons.active; do
        nvidia-smi --query-gpu=$f --format=csv,noheader > /dev/null 2>&1 && { reason_field=,$f; break; }
    done
fi
nvml() {
    [ "$DEVICE" = cuda ] || { echo "simulated"; return; }
    nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw$reason_field \
        --format=csv,noheader 2>&1 | head -1 | tr -d '\t'
}

# step NAME ROUND PROBLEMS ESTIMATE_S OUTFILE -- COMMAND...: runs COMMAND (stdout to OUTFILE,
# stderr to OUTFILE.err) when ESTIMATE_S fits in the time left, under a timeout of the time left.
# Returns its exit code, or 99 when skipped.
step() {
    local name=$1 round=$2 probs=$3 est=$4 file=$5; shift 6
    local l; l=$(left)
    if [ "$est" -gt "$l" ]; then
        echo "SKIP $name r$round [$probs]: estimated ${est}s, ${l}s left of TOTAL_S=$TOTAL_S" |
            tee -a "$skipped"
        return 99
    fi
    if [ $dry = 1 ]; then
        echo "plan: at ${dry_t}s r$round $name [$probs] est ${est}s: $*"
        dry_t=$((dry_t + est)); last_wall=$((est * 10 / 12)); return 0  # later rounds: ~est
    fi
    local s rc w; s=$(date +%s%N)
    # timeout signals the whole process group (kforge baseline's Python child included)
    timeout -k 10 "$l" "$@" > "$file" 2> "$file.err"; rc=$?
    w=$(( ($(date +%s%N) - s) / 1000000 )); w=$((w / 1000)).$(printf %03d $((w % 1000)))
    [ $rc = 124 ] && echo "TIMEOUT $name r$round [$probs] after ${l}s (TOTAL_S guard)" | tee -a "$skipped"
    printf '%s\t%s\t%s\t%s\t%s\t%.1f\t%s\t%s\n' "$(elapsed)" "$name" "$round" "$probs" "$rc" "$w" \
        "${file#$O/}" "$(nvml)" >> "$steps"
    echo "  $(date -u +%T) $name r$round [$probs] rc=$rc wall=${w}s"
    last_wall=${w%.*}
    return $rc
}

nvidia_snapshot() {
    [ "$DEVICE" = cuda ] && [ $dry = 0 ] || return 0
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,power.limit$reason_field \
        --format=csv >> "$O/gpu.txt" 2>&1
}
nvidia_snapshot
[ $dry = 1 ] || "$K" --version >> "$O/meta.txt" 2>&1 || { echo "run.sh: kforge does not start"; exit 3; }

# Speed-of-light bytes/FLOPs with the calibrated ceilings (the table's % of copy bandwidth).
step sol 0 all 5 "$O/sol.json" -- "$K" sol --json --calibration bench/calibration/h200.json \
    $(printf 'problems/%s.json ' "${problems[@]}")

if [ $prep = 1 ]; then
    mkdir -p "$O/prep"
    ng=0; for p in "${problems[@]}"; do is_gemm "$p" && ng=$((ng + 1)); done
    pe=$(( 20 + 65 * ((ng + JOBS - 1) / JOBS) ))  # CUTLASS GEMMs ~60 s each, JOBS at once
    step prep 0 all $pe "$O/prep/compile.txt" -- env K="$K" PREP_OUT="$O/prep" DEVICE="$DEVICE" \
        JOBS="$JOBS" bash bench/kernels/compare/prep.sh "${problems[@]}"
fi

# Groups of --batch problems, in the order given.
ngroups=$(( (${#problems[@]} + batch - 1) / batch ))
for ((g = 0; g < ngroups; g++)); do
    group=("${problems[@]:$((g * batch)):$batch}")
    gname=${group[0]}; [ ${#group[@]} -gt 1 ] && gname="g$((g + 1))-${#group[@]}problems"
    echo "== group $((g + 1))/$ngroups: ${group[*]} ($(date -u +%T), $(elapsed)s elapsed)"
    declare -A a_wall=(); b_wall=""
    for ((r = 1; r <= rounds; r++)); do
        # this round's estimates: every A of the group, then B; a round that does not fit as a
        # whole is not started (no A without its B)
        declare -A a_est=(); round_est=0
        for p in "${group[@]}"; do
            e=${a_wall[$p]:-}; if [ -n "$e" ]; then e=$(( e * 12 / 10 + 2 )); else e=$(est_a_first "$p"); fi
            a_est[$p]=$e; round_est=$((round_est + e))
        done
        if [ -n "$b_wall" ]; then
            be=$(( b_wall * 12 / 10 + 5 ))
            if [[ $modes == *compile_max_autotune* ]]; then
                c=$(est_b 30 "${group[@]}"); [ $c -lt $be ] && be=$c
            fi
        else
            be=$(est_b "$MAT_S" "${group[@]}")
        fi
        round_est=$((round_est + be))
        if [ $round_est -gt "$(left)" ]; then
            echo "SKIP round $r of [${group[*]}]: estimated ${round_est}s (A $((round_est - be))s," \
                "B ${be}s), $(left)s left of TOTAL_S=$TOTAL_S" | tee -a "$skipped"
            break
        fi
        stop=0
        for p in "${group[@]}"; do
            mkdir -p "$O/$p"
            step kforge "$r" "$p" "${a_est[$p]}" "$O/$p/kforge-r$r.json" -- \
                "$K" eval --device "$DEVICE" --tier full --problem "problems/$p.json" \
                --program "problems/$p.kf" --repeat "$REPEAT" --json \
                --worker-log "$O/$p/worker.log"
            rc=$?; [ $rc = 99 ] && { stop=1; break; }
            a_wall[$p]=$last_wall
        done
        unset a_est
        [ $stop = 1 ] && { echo "  group stops at round $r (time guard)" | tee -a "$skipped"; break; }
        e=$be
        files=$(printf 'problems/%s.json ' "${group[@]}")
        if [ "$DEVICE" = cuda ]; then
            step baseline "$r" "${group[*]}" "$e" "$O/baseline-$gname-r$r.json" -- \
                "$K" baseline $files --modes "$modes" --iters "$ITERS" \
                --db /tmp/kforge-compare-baseline.db --json
        else  # the Python side's host-clock test mode: format and control flow only
            step baseline "$r" "${group[*]}" "$e" "$O/baseline-$gname-r$r.json" -- \
                env PYTHONPATH="$R/python" "$KFORGE_PYTHON" -m kforge_py.baseline $files \
                --modes "$modes" --iters "$ITERS" --device cpu
        fi
        rc=$?; [ $rc = 99 ] && { echo "  group stops at round $r (time guard)" | tee -a "$skipped"; break; }
        b_wall=$last_wall
    done
    unset a_wall
done
nvidia_snapshot
[ $dry = 1 ] && { echo "plan ends at ${dry_t}s of TOTAL_S=$TOTAL_S (estimates)"; exit 0; }
echo "== done after $(elapsed)s ($(date -u +%T)); skipped: $(grep -c . "$skipped")"
# One file back: the device tool returns few files.
tar czf "$OUTROOT/compare.tgz" -C "$O" . && cp "$steps" "$skipped" "$OUTROOT/" &&
    ls -l "$OUTROOT/compare.tgz"
if [ "${KEEP_RUN_IN_OUT:-0}" != 1 ]; then
    kept=/tmp/kforge-compare-run-$(date +%Y%m%d-%H%M%S)-$$
    mv "$O" "$kept" && echo "run folder: $kept (packed in $OUTROOT/compare.tgz)"
fi
