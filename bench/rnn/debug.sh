#!/usr/bin/env bash
# Why are the rnn programs incorrect on the GPU (H100, session 18) while the host emulation
# (RnnHostRun) passes the same source? Small lstm / gru specs (1, 2 and 6 layers; both layouts;
# h_n and output), the planner's seed and knob variants (units, threads) evaluated at the quick
# tier on a fresh store, one line each; then compute-sanitizer (memcheck, racecheck) over the
# worker processes too (--target-processes all) for the 2-layer lstm.
#   OUT=DIR bash bench/rnn/debug.sh        (the GPU machine, repo root, .carry extracted)
# environment: DIMS (the specs' dims, JSON; default {"B": 3, "T": 5, "I": 8, "H": 16}), ONLY (spec
# names, default all six), VARIANTS ("units U threads N" knob edits separated by ';', default
# three; "" none), SANITIZE (0 skips compute-sanitizer).
set -uo pipefail
R=$PWD
K=${KFORGE:-$R/.carry/bin/kforge}
O=${OUT:-/tmp/kforge-out}/rnn_debug
mkdir -p "$O/specs" "$O/programs"
DIMS=${DIMS:-'{"B": 3, "T": 5, "I": 8, "H": 16}'} ONLY=${ONLY:-} python3 - "$R/bench/rnn" "$O/specs" <<'PY'
import json, os, sys
sys.path.insert(0, sys.argv[1])
import make_specs as m
for name, kind, layers, bf, result in [("l1_hn", "lstm", 1, True, "h_n"), ("l2_hn", "lstm", 2, True, "h_n"),
                                       ("l6_hn", "lstm", 6, True, "h_n"), ("l1_out_tb", "lstm", 1, False, "output"),
                                       ("g1_out", "gru", 1, False, "output"), ("g2_hn", "gru", 2, False, "h_n")]:
    if os.environ["ONLY"] and name not in os.environ["ONLY"].split():
        continue
    s = m.spec(name, kind, layers, False, bf, result)
    s["dims"] = json.loads(os.environ["DIMS"])
    json.dump(s, open(os.path.join(sys.argv[2], name + ".json"), "w"), indent=1)
PY
ev() {  # ev NAME SPEC PROGRAM
    local db="$O/$1.db"; rm -f "$db"
    timeout 120 "$K" eval "$2" --program "$3" --tier quick --device "${DEVICE:-cuda}" --db "$db" --json > "$O/$1.json" 2> "$O/$1.err"
    echo "$1 rc=$? $(grep -m1 "\"status\"" "$O/$1.json") $(grep -m1 "\"message\"" "$O/$1.json" | cut -c1-220)"
}
for spec in "$O"/specs/*.json; do
    b=$(basename "$spec" .json)
    timeout 60 "$K" optimize "$spec" --device sim --rounds 0 --db "$O/plan.db" > "$O/$b.plan.log" 2>&1
    python3 - "$O/plan.db" "$b" > "$O/programs/$b.kf" <<'PY'
import sqlite3, sys
row = sqlite3.connect(sys.argv[1]).execute("select c.program_text from candidates c join problems p on "
    "p.id = c.problem_id where p.name = ? order by c.id desc limit 1", (sys.argv[2],)).fetchone()
print(row[0] if row else "", end="")
PY
    grep -m1 "units" "$O/programs/$b.kf"
    ev "$b" "$spec" "$O/programs/$b.kf"
    IFS=';' read -ra vs <<< "${VARIANTS-units 1 threads 32;units 4 threads 64;units 16 threads 256}"
    for v in "${vs[@]}"; do
        sed -E "s/units [0-9]+ threads [0-9]+/$v/" "$O/programs/$b.kf" > "$O/programs/$b.v.kf"
        ev "$b [$v]" "$spec" "$O/programs/$b.v.kf"
    done
done | tee "$O/summary.txt"
[ "${SANITIZE:-1}" != 0 ] && [ -f "$O/specs/l2_hn.json" ] && command -v compute-sanitizer > /dev/null && for tool in memcheck racecheck; do
    timeout 150 compute-sanitizer --target-processes all --tool $tool --print-limit 20 \
        "$K" eval "$O/specs/l2_hn.json" --program "$O/programs/l2_hn.kf" --tier quick --device cuda \
        --db "$O/san_$tool.db" --json > "$O/san_$tool.txt" 2>&1
    echo "$tool rc=$?"; grep "=====" "$O/san_$tool.txt" | head -30
done | tee -a "$O/summary.txt"
