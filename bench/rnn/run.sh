#!/usr/bin/env bash
# Issue 25's recurrent cells on the GPU: kforge's rnn kernels (kernels/rnn.cuh: a time-parallel
# input projection, then a persistent recurrent kernel per layer with W_hh in shared memory and a
# grid barrier per step) against PyTorch eager (nn.LSTM / nn.GRU on cuDNN, fp32, TF32 off) at
# KernelBench level 3's sizes (batch 10, 512 steps, hidden 256, 6 layers; LSTM / GRU, output,
# h_n, c_n, bidirectional) and two larger hidden sizes. Specs from bench/rnn/make_specs.py (no
# import: the KernelBench files' fp64 import check takes minutes a file on one core).
# Per spec: the planner's start program (`kforge optimize --rounds 0`), then `kforge eval --tier
# full --device cuda` (correctness_full at the real shape against the GPU fp64 reference, timing),
# then PyTorch eager timed in one Python process (eager.py), a Markdown table.
#
# usage (repo root, with the carried binary): OUT=DIR bash bench/rnn/run.sh
# environment: KFORGE (.carry/bin/kforge), DEVICE (cuda), ONLY (spec names, default all),
#   KFORGE_PYTHON (python with torch).
# Results under $OUT/rnn: specs/, programs/NAME.kf, eval/NAME.json (+ .log), table.md,
#   steps.txt.
set -uo pipefail
R=$PWD
. "$R/bench/lib/step.sh"
K=${KFORGE:-$R/.carry/bin/kforge}
DEVICE=${DEVICE:-cuda}
PY=${KFORGE_PYTHON:-$R/.venv/bin/python}
[ -x "$PY" ] || PY=python3
O=${OUT:-/tmp/kforge-out}/rnn
mkdir -p "$O/specs" "$O/programs" "$O/eval"
: > "$O/steps.txt"
"$PY" "$R/bench/rnn/make_specs.py" "$O/specs" || exit 3
for spec in "$O"/specs/*.json; do
    b=$(basename "$spec" .json)
    # step's own "NAME rc=.. wall_s=.." line goes to stdout: each command writes its files itself
    step "plan_$b" 120 sh -c 'exec "$@" > "$0" 2>&1' "$O/eval/$b.plan.log" \
        "$K" optimize "$spec" --device sim --rounds 0 --db "$O/plan.db"
    python3 - "$O/plan.db" "$b" > "$O/programs/$b.kf" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
row = db.execute("select c.program_text from candidates c join problems p on p.id = c.problem_id "
                 "where p.name = ? order by c.id desc limit 1", (sys.argv[2],)).fetchone()
print(row[0] if row else "", end="")
PY
    step "eval_$b" 300 sh -c 'exec "$@" > "$0.json" 2> "$0.log"' "$O/eval/$b" \
        "$K" eval "$spec" --program "$O/programs/$b.kf" --tier full --device "$DEVICE" --json
    grep -o '"status": *"[a-z_]*"' "$O/eval/$b.json" | head -1 | sed "s/^/$b /"
done
[ "$DEVICE" = cuda ] && step eager 600 sh -c 'e=$1; shift; exec "$@" > "$0" 2> "$e"' "$O/table.md" "$O/eager.log" \
    "$PY" "$R/bench/rnn/eager.py" "$O/specs" "$O"
cat "$O/table.md" 2>/dev/null
