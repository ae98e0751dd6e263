#!/usr/bin/env bash
# KernelBench coverage on the CPU: import Levels 1-3 of a KernelBench checkout with
# `kforge import kernelbench`, then ask the fusion planner for a start program of every imported
# spec on the simulated device (`kforge optimize SPEC --device sim --rounds 0`: every kernel of
# the plan checked and lowered, nothing evaluated), and write a table per problem - imported?
# planned? the construct that blocks it - with totals per level (summarize.py).
#
#   bench/kernelbench/coverage.sh KERNELBENCH_DIR [OUT_DIR]
#
# KFORGE: the kforge binary (default build/ci/cli/kforge of this checkout); LEVELS (default
# "1 2 3"). Results under OUT_DIR (default /tmp/kforge-coverage): levelN/import.log,
# levelN/specs/, levelN/plan/STEM.log (rc on its last line), coverage.md. No GPU: the GPU gates
# and timings are bench/ scripts of their own. Exit 0 when the table was written, 2 on bad
# arguments.
set -uo pipefail
R=$(cd "$(dirname "$0")/../.." && pwd)
KB=${1:-}
O=${2:-/tmp/kforge-coverage}
K=${KFORGE:-$R/build/ci/cli/kforge}
LEVELS=${LEVELS:-1 2 3}
[ -n "$KB" ] && [ -d "$KB" ] || { echo "usage: $0 KERNELBENCH_DIR [OUT_DIR]" >&2; exit 2; }
[ -x "$K" ] || { echo "coverage: no kforge binary at $K (build it, or set KFORGE)" >&2; exit 2; }
PY=${KFORGE_PYTHON:-python3}
[ -x "$R/.venv/bin/python" ] && PY=$R/.venv/bin/python
mkdir -p "$O"
for L in $LEVELS; do
    D=$KB/level$L
    [ -d "$D" ] || { echo "coverage: no $D" >&2; exit 2; }
    mkdir -p "$O/level$L/specs" "$O/level$L/plan"
    s=$SECONDS
    "$K" import kernelbench "$D"/*.py -o "$O/level$L/specs" > "$O/level$L/import.log" 2>&1
    echo "level $L: import wall_s=$((SECONDS - s))" | tee "$O/level$L/steps.txt"
    s=$SECONDS
    grep '^ok: ' "$O/level$L/import.log" | sed -n 's/^ok: .* -> \(.*\.json\) (.*/\1/p' |
        while read -r spec; do
            stem=$(basename "$spec" .json)
            timeout -k 10 300 "$K" optimize "$spec" --device sim --rounds 0 \
                --db "$O/level$L/plan.db" > "$O/level$L/plan/$stem.log" 2>&1
            echo "rc=$?" >> "$O/level$L/plan/$stem.log"
        done
    echo "level $L: plan wall_s=$((SECONDS - s))" | tee -a "$O/level$L/steps.txt"
done
"$PY" "$R/bench/kernelbench/summarize.py" "$O" $LEVELS > "$O/coverage.md"
tail -n 6 "$O/coverage.md"
