# shellcheck shell=bash
# Sourced by the KernelBench bench scripts (bench/pool, bench/conv, bench/intops, bench/shapes):
# the steps they share - import some KernelBench files, the planner's verdict per spec (and, for
# the scripts that ask, that start program through every gate), `kforge suite` under one budget,
# the PyTorch baselines, `kforge report`. Each script keeps its own file list and usage line.
# Needs R (the repository root) and KB (the KernelBench checkout) set.
#
#   kb_bench_init NAME SUITE_S_DEFAULT
#       K (KFORGE, default .carry/bin/kforge), DEVICE (cuda; sim for a dry run), SUITE_S,
#       MODES (eager,compile_default), KFORGE_PYTHON (python3 unless .venv has one), the results
#       folder O=$OUT/NAME with specs/, DB=$O/kforge.db, an empty $O/steps.txt; nullglob on.
#   step NAME TIMEOUT_S CMD...  (bench/lib/step.sh)
#       runs CMD under a timeout, appends "NAME rc=.. wall_s=.." to $O/steps.txt.
#   kb_add_files LEVEL PATTERNS
#       appends to files[] the $KB/LEVEL/PATTERN.py that exist, for each word of PATTERNS (the
#       words are not globbed here: with nullglob a 12_* matching nothing in the current folder
#       would vanish).
#   kb_import TIMEOUT_S
#       `kforge import kernelbench` of files[] into $O/specs (import.log); a failed file keeps
#       no spec. Exits 2 when files[] is empty.
#   kb_status PLAN_TIMEOUT_S [gates]
#       $O/status.txt, one line per file: stem | import status | the planner's verdict (a start
#       program, or "refused: <why>"), and with `gates` the start program (programs/STEM.kf)
#       through `kforge eval --tier full --json` on DEVICE (eval/STEM.json, eval/STEM.log),
#       on a GPU after compiling every start program JOBS (nproc) at a time (precompile/).
#   kb_suite, kb_baseline TIMEOUT_S, kb_report
#       `kforge suite` over the specs (suite.log, best/), the baselines stored into each
#       problem's newest run (cuda only; baseline.log), the report over the suite's runs.
#   kb_summary [gates]
#       the closing count line (also appended to steps.txt).

. "$R/bench/lib/step.sh"
. "$R/bench/lib/calibration.sh"  # cal_file

kb_bench_init() {
    K=${KFORGE:-$R/.carry/bin/kforge}
    DEVICE=${DEVICE:-cuda}
    SUITE_S=${SUITE_S:-$2}
    MODES=${MODES:-eager,compile_default}
    [ -n "${KFORGE_PYTHON:-}" ] || [ -x "$R/.venv/bin/python" ] || export KFORGE_PYTHON=python3
    O=${OUT:-/tmp/kforge-out}/$1
    mkdir -p "$O/specs"
    DB=$O/kforge.db
    : > "$O/steps.txt"
    shopt -s nullglob
    files=()
}

kb_add_files() {
    local level=$1 g f pats
    read -r -a pats <<< "$2"
    for g in "${pats[@]}"; do
        for f in "$KB"/$level/$g.py; do [ -f "$f" ] && files+=("$f"); done
    done
}

kb_import() {
    local f
    [ ${#files[@]} -gt 0 ] || { echo "no files to import (KernelBench under $KB)" >&2; exit 2; }
    # one Python process; a failed file keeps no spec
    step import "$1" "$K" import kernelbench "${files[@]}" -o "$O/specs" > "$O/import.log" 2>&1
    grep '^FAILED:' "$O/import.log" | sed -n 's/.*(spec written to \(.*\.json\)).*/\1/p' |
        while read -r f; do rm -f "$f"; done
}

# kb_start_program PLAN_DB PROBLEM_NAME: the newest candidate's program text in PLAN_DB (the start
# program `kforge optimize --rounds 0` recorded).
kb_start_program() {
    python3 - "$1" "$2" 2>/dev/null <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
row = db.execute("select c.program_text from candidates c join problems p on p.id = c.problem_id "
                 "where p.name = ? order by c.id desc limit 1", (sys.argv[2],)).fetchone()
print(row[0] if row else "", end="")
PY
}

kb_status() {
    local plan_limit=$1 with_gates=${2:-} f b line found spec plan out prog
    local -A verdict=() specs=()
    [ -n "$with_gates" ] && mkdir -p "$O/eval" "$O/programs" "$O/precompile"
    : > "$O/status.txt"
    # 1. per file: the planner's verdict, and with gates its start program (programs/STEM.kf)
    for f in "${files[@]}"; do
        b=$(basename "$f" .py)
        found=("$O"/specs/*"$b".json)
        spec=${found[0]:-}
        specs[$b]=$spec
        verdict[$b]="-"
        [ -n "$spec" ] || continue
        # --rounds 0: the start program is synthesized (or refused) and nothing is evaluated
        out=$(timeout "$plan_limit" "$K" optimize "$spec" --device sim --rounds 0 \
            --db "$O/plan.db" 2>&1)
        if echo "$out" | grep -q 'none can be synthesized'; then
            verdict[$b]="refused: $(echo "$out" | grep -o 'not expressible.*\|no configuration.*' | head -1 | cut -c1-140)"
        else
            verdict[$b]="start program synthesized"
            [ -n "$with_gates" ] &&
                kb_start_program "$O/plan.db" "$(basename "$spec" .json)" > "$O/programs/$b.kf"
        fi
    done
    # 2. with gates on a GPU: the start programs compiled JOBS at a time (one nvcc each, the
    #    machine's cores) into the default compile cache, so each evaluation's compile is a hit
    if [ -n "$with_gates" ] && [ "$DEVICE" = cuda ]; then
        for b in "${!specs[@]}"; do
            [ -s "$O/programs/$b.kf" ] && echo "$b ${specs[$b]}"
        done | xargs -r -P "${JOBS:-$(nproc)}" -L 1 sh -c \
            'timeout 900 "$0" compile "$3" "$1/programs/$2.kf" -o "$1/precompile/$2" \
                > "$1/precompile/$2.log" 2>&1; echo "precompile $2 rc=$?"' "$K" "$O" \
            >> "$O/steps.txt"
    fi
    # 3. per file, in order: the start program through every gate, one at a time (timings)
    for f in "${files[@]}"; do
        b=$(basename "$f" .py)
        line=$(grep -E "^(ok|FAILED): [^ ]*/$b\.py" "$O/import.log" | head -1 | cut -c1-160)
        plan=${verdict[$b]}
        if [ -n "$with_gates" ]; then
            local gates="-"
            prog="$O/programs/$b.kf"
            if [ "$plan" = "start program synthesized" ]; then
                if [ -s "$prog" ]; then
                    timeout 900 "$K" eval "${specs[$b]}" --program "$prog" --tier full \
                        --device "$DEVICE" --json > "$O/eval/$b.json" 2> "$O/eval/$b.log"
                    gates="eval rc=$? $(grep -o '"status": *"[a-z_]*"' "$O/eval/$b.json" | head -1)"
                else
                    gates="(start program not found in plan.db)"
                fi
            fi
            printf '%s | %s | %s | %s\n' "$b" "${line%%:*}" "$plan" "$gates" >> "$O/status.txt"
        else
            printf '%s | %s | %s\n' "$b" "${line%%:*}" "$plan" >> "$O/status.txt"
        fi
    done
    cat "$O/status.txt"
}

kb_suite() {
    step suite $((SUITE_S + 200)) "$K" suite "$O/specs" --device "$DEVICE" --budget-wall "$SUITE_S" \
        --db "$DB" --out "$O/best" > "$O/suite.log" 2>&1
}

kb_baseline() {
    [ "$DEVICE" = cuda ] || return 0
    step baseline "$1" "$K" baseline "$O"/specs/*.json --db "$DB" --latest-run --modes "$MODES" \
        > "$O/baseline.log" 2>&1
}

kb_report() {
    local runs
    runs=$("$K" db runs --db "$DB" | awk 'NR > 1 && $1 ~ /^[0-9]+$/ {print $1}' | sort -n | tr '\n' ' ')
    local cal
    cal=$(cal_file)
    # shellcheck disable=SC2086  # one argument per run id
    [ -n "$runs" ] && step report 120 "$K" report $runs --db "$DB" --out "$O/report" \
        ${cal:+--calibration "$cal"} > "$O/report.log" 2>&1
}

kb_summary() {
    local s
    s="imported $(ls "$O/specs" | wc -l) of ${#files[@]}; planner: $(grep -c 'synthesized' "$O/status.txt") start programs, $(grep -c 'refused' "$O/status.txt") refused"
    [ -n "${1:-}" ] && s="$s; eval passed: $(grep -c '"passed"' "$O/status.txt")"
    echo "$s" | tee -a "$O/steps.txt"
}
