#!/usr/bin/env bash
# Issue 4, "GEMM with fused epilogues: the fused kernel runs within 5% of the same GEMM with a
# plain store". For each fused GEMM problem P, make_plain.py writes a twin P_plain (the matmul
# only, the first gemm kernel's knobs unchanged, chain = cast + store); both programs are
# compiled in parallel, then evaluated through `kforge eval --tier full` interleaved, round by
# round: P fused, P plain, next problem ...; ROUNDS rounds.
# One device call, from the repository root on the GPU machine:
#   bash bench/kernels/epilogue_cost/run.sh [PROBLEM...]
#     default: every problems/linear_*.kf, swiglu_bf16, matmul_rowsum_f32
# environment: K (kforge binary; default .carry/bin/kforge, else build/*/cli/kforge)
#   OUT (/tmp/kforge-out; results under $OUT/epilogue: table.md, summary.txt, results.jsonl,
#   twins/ (the P_plain.json/.kf evaluated), raw/ (every eval's JSON and stderr, compile JSONs))
#   DEVICE (cuda; sim: a smoke test of the script, every line SIMULATED)  ROUNDS (2)
#   JOBS (8: parallel compiles)  TOTAL_S (540: time guard; an evaluation pair starts only when
#   its estimate fits, the rest is listed as skipped)  COMPILE_S (90: estimate per compile
#   wave of JOBS programs, and for an eval whose program did not compile beforehand)
#   PROG_DIR (problems: where P.kf is read; another folder compares another configuration of
#   the same problem, e.g. a pingpong schedule, fused against its own plain twin)
#   EVAL_S (25: estimate of one full-tier eval until one was measured)  SIM_CHECK (1: validate
#   each twin with a simulated quick eval too; 0: fmt + check only)
# A fused program of several kernels (gemm + rowwise, two gemms) is compared with its first
# GEMM alone: the ratio is then whole program / GEMM part, verdict n/a.
# Exit 1 when a twin or an evaluation failed, 4 (else) when the time guard skipped a round of
# a problem, 2 on bad arguments, 3 without a kforge.
set -uo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd)
D=$R/bench/kernels/epilogue_cost
cd "$R"
case "${1:-}" in -h|--help) sed -n 2,23p "$D/run.sh"; exit 0 ;; esac
. "$R/bench/lib/kforge_cases.sh"
kforge_default_binary "$R" || { echo "no kforge binary (set K)" >&2; exit 3; }
START=$(date +%s)
elapsed() { echo $(( $(date +%s) - START )); }
DEVICE=${DEVICE:-cuda}
ROUNDS=${ROUNDS:-2}
JOBS=${JOBS:-8}
TOTAL_S=${TOTAL_S:-540}
COMPILE_S=${COMPILE_S:-90}
EVAL_S=${EVAL_S:-25}
SIM_CHECK=${SIM_CHECK:-1}
for v in ROUNDS JOBS TOTAL_S COMPILE_S EVAL_S; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "$v must be a positive integer, got '${!v}'" >&2; exit 2; }
done
O=${OUT:-/tmp/kforge-out}/epilogue
mkdir -p "$O/raw" "$O/twins"
rm -f "$O/results.jsonl" "$O/summary.txt"
TAG=""; [ "$DEVICE" = sim ] && TAG=" SIMULATED"
say() {   # one line to stdout and summary.txt; on the simulated device each line says so
    local l="$*"; [[ -n $TAG && $l != *SIMULATED* ]] && l+=$TAG
    echo "$l" | tee -a "$O/summary.txt"
}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
export KFORGE_CACHE_DIR=${KFORGE_CACHE_DIR:-/tmp/kforge-cache}
. "$R/bench/lib/link_build_tree.sh"
kforge_link_build_tree "$K" "$R"

PROG_DIR=${PROG_DIR:-problems}
problems=("$@")
if [ ${#problems[@]} -eq 0 ]; then
    for f in problems/linear_*.kf; do problems+=("$(basename "$f" .kf)"); done
    problems+=(swiglu_bf16 matmul_rowsum_f32)
fi
for p in "${problems[@]}"; do
    [ -f "problems/$p.json" ] && [ -f "$PROG_DIR/$p.kf" ] || { echo "unknown problem $p" >&2; exit 2; }
done
failed=0

# 1. Twins (validated: same canonical gemm knobs, kforge check, a simulated quick eval).
declare -A nkern
ok=()
simflag=(); [ "$SIM_CHECK" = 1 ] || simflag=(--no-sim)
for p in "${problems[@]}"; do
    if line=$(python3 "$D/make_plain.py" "problems/$p.json" "$PROG_DIR/$p.kf" "$W" --kforge "$K" \
              "${simflag[@]}" 2> "$O/raw/$p.twin.err"); then
        nkern[$p]=$(sed -n 's/.*kernels=\([0-9]*\).*/\1/p' <<< "$line")
        cp "$W/${p}_plain.json" "$W/${p}_plain.kf" "$O/twins/"
        ok+=("$p")
        say "$line"
    else
        say "$p: twin failed: $(tail -3 "$O/raw/$p.twin.err" | tr '\n' ' ')"
        python3 -c 'import json, sys
print(json.dumps({"problem": sys.argv[1], "variant": "plain", "round": 0, "rc": 1,
                  "wall_s": 0, "kernels": 0, "status": "twin_failed",
                  "message": open(sys.argv[2]).read().strip()[-300:]}))' \
            "$p" "$O/raw/$p.twin.err" >> "$O/results.jsonl"
        failed=1
    fi
done

# Single-kernel programs first: their ratio is the epilogue cost the target is about, so a time
# guard that cuts the run keeps them.
sorted=()
for p in "${ok[@]}"; do [ "${nkern[$p]}" = 1 ] && sorted+=("$p"); done
for p in "${ok[@]}"; do [ "${nkern[$p]}" = 1 ] || sorted+=("$p"); done
ok=("${sorted[@]}")

# 2. Compile every program in parallel (the compile cache then serves the evaluations), within
# the time left after one evaluation pair.
progs=()
for p in "${ok[@]}"; do
    progs+=("$p.fused|problems/$p.json|$PROG_DIR/$p.kf" "$p.plain|$W/${p}_plain.json|$W/${p}_plain.kf")
done
n=${#progs[@]}
waves=$(( (n + JOBS - 1) / JOBS ))
say "plan: ${#ok[@]} problems, $n programs; compile ~$(( waves * COMPILE_S ))s ($waves wave(s) of $JOBS), evals ~$(( ROUNDS * n * EVAL_S ))s ($ROUNDS round(s) x $n x ${EVAL_S}s); TOTAL_S=$TOTAL_S"
declare -A compiled
limit=$(( TOTAL_S - $(elapsed) - 2 * EVAL_S ))
if [ "$n" -gt 0 ] && [ "$limit" -gt 0 ]; then
    s=$(date +%s)
    printf '%s\n' "${progs[@]}" | timeout "$limit" xargs -d '\n' -n 1 -P "$JOBS" bash -c '
        IFS="|" read -r name prob prog <<< "$3"
        "$0" eval --device "$2" --tier compile --problem "$prob" --program "$prog" \
            --json > "$1/raw/$name.compile.json" 2> "$1/raw/$name.compile.err"' "$K" "$O" "$DEVICE"
    crc=$?
    nc=0
    for c in "${progs[@]}"; do
        name=${c%%|*}
        st=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("status"))' \
             "$O/raw/$name.compile.json" 2>/dev/null)
        if [ "$st" = passed ]; then compiled[$name]=1; nc=$((nc + 1))
        else say "$name: compile tier: ${st:-no report} (see raw/$name.compile.err)"; fi
    done
    say "compile: $nc/$n passed in $(( $(date +%s) - s ))s (rc $crc$([ $crc = 124 ] && echo ': time limit'))"
else
    say "compile: skipped (no time left: limit ${limit}s)"
fi

# 3. Full-tier evaluations, interleaved: round r: P1 fused, P1 plain, P2 fused, ...
declare -A lastwall
maxwall=0
est() {   # estimated seconds of one evaluation of program $1
    local e=${lastwall[$1]:-}
    if [ -z "$e" ]; then
        e=$EVAL_S; [ "$maxwall" -gt 0 ] && e=$maxwall
        [ -n "${compiled[$1]:-}" ] || e=$(( e + COMPILE_S ))
    fi
    echo "$e"
}
skipped=()
for r in $(seq 1 "$ROUNDS"); do
    for p in "${ok[@]}"; do
        need=$(( $(est "$p.fused") + $(est "$p.plain") ))
        left=$(( TOTAL_S - $(elapsed) ))
        if [ "$need" -gt "$left" ]; then
            skipped+=("$p:r$r")
            say "$p round $r: skipped (estimate ${need}s, ${left}s left)"
            continue
        fi
        for v in fused plain; do
            if [ $v = fused ]; then prob=problems/$p.json; prog=$PROG_DIR/$p.kf
            else prob=$W/${p}_plain.json; prog=$W/${p}_plain.kf; fi
            base=$O/raw/$p.$v.r$r
            left=$(( TOTAL_S - $(elapsed) )); [ "$left" -gt 300 ] && left=300
            [ "$left" -lt 1 ] && left=1
            s=$(date +%s)
            timeout "$left" "$K" eval --device "$DEVICE" --tier full --problem "$prob" \
                --program "$prog" --json > "$base.json" 2> "$base.err"
            rc=$?
            wall=$(( $(date +%s) - s ))
            lastwall[$p.$v]=$wall
            [ -n "${compiled[$p.$v]:-}" ] && [ "$wall" -gt "$maxwall" ] && maxwall=$wall
            compiled[$p.$v]=1
            python3 "$D/collect.py" row "$base.json" "$base.err" "$O/results.jsonl" "$p" "$v" \
                "$r" "$rc" "$wall" "${nkern[$p]:-1}"
            line=$(python3 "$R/bench/lib/eval_line.py" "$base.json" "$base.err" 160)
            say "$p $v round $r rc=$rc wall=${wall}s status/median_us/message: $line"
            [ "${line%% *}" = passed ] || failed=1
        done
    done
done

# 4. Table.
python3 "$D/collect.py" table "$O/results.jsonl" "$O/table.md" "$DEVICE" "$ROUNDS" \
    "${skipped[@]}" | while IFS= read -r l; do say "$l"; done
say "total $(elapsed)s; table: $O/table.md"
[ "$failed" = 0 ] && [ ${#skipped[@]} -gt 0 ] && exit 4
exit $failed
