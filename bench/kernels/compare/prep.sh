#!/usr/bin/env bash
# Compiles the programs of the named problems (problems/P.kf) through the evaluator, tier
# compile, JOBS at once, so that the timed rounds of run.sh find them in KFORGE_CACHE_DIR.
# usage: K=kforge PREP_OUT=DIR [DEVICE=cuda] [JOBS=14] bash prep.sh PROBLEM...
# Prints "P rc=N wall_s=S" per problem; exit 1 when one failed to compile.
set -uo pipefail
: "${K:?set K}"; : "${PREP_OUT:?set PREP_OUT}"
mkdir -p "$PREP_OUT"
export K PREP_OUT DEVICE=${DEVICE:-cuda}
out=$(printf '%s\n' "$@" | xargs -P "${JOBS:-14}" -I{} bash -c '
    s=$(date +%s)
    "$K" eval --device "$DEVICE" --tier compile --problem "problems/$1.json" \
        --program "problems/$1.kf" --json > "$PREP_OUT/$1.json" 2> "$PREP_OUT/$1.err"
    echo "$1 rc=$? wall_s=$(( $(date +%s) - s ))"' _ {})
echo "$out"
! grep -qv ' rc=0 ' <<< "$out"
