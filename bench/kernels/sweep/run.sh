#!/usr/bin/env bash
# Knob sweep of suite programs on the GPU (issue 4: pick the configs for problems/*.kf where a
# row-wise program trails torch.compile). For each line "PROBLEM LABEL KNOBS..." of a cases file,
# writes PROBLEM.LABEL.kf = problems/PROBLEM.kf with the knobs of its first kernel header replaced
# by KNOBS (the text after the kernel's argument list; "k0: KNOBS | k1: KNOBS" sets the named
# kernels' knobs instead), then, per problem, evaluates the suite
# program and every variant in one worker session: `kforge eval --tier quick --programs-dir`
# (small-shape correctness, then 3 + 20 cold-L2 timed runs at full shape), and one line per
# program: problem, label, status, median us, ratio to the suite program.
#   bash bench/kernels/sweep/run.sh [CASES]     (default bench/kernels/sweep/rowwise_f32.cases)
# Every program is compiled first, JOBS (14) at a time.
# environment: K (kforge; default .carry/bin/kforge, else build/*/cli/kforge), OUT
#   (/tmp/kforge-out; results under $OUT/sweep: PROBLEM/*.kf, PROBLEM.json, PROBLEM.err,
#   summary.txt), DEVICE (cuda; sim: a smoke test, every line SIMULATED), TOTAL_S (300: no
#   problem starts after this many seconds).
# Exit 1 when an evaluation failed to produce a report, 2 on bad arguments.
set -uo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$R"
. "$R/bench/lib/kforge_cases.sh"
case "${1:-}" in -h|--help) sed -n 2,15p "$0"; exit 0 ;; esac
CASES=${1:-bench/kernels/sweep/rowwise_f32.cases}
[ -f "$CASES" ] || { echo "no cases file: $CASES" >&2; exit 2; }
kforge_bench_setup "$R"
TOTAL_S=${TOTAL_S:-300}
O=${OUT:-/tmp/kforge-out}/sweep
mkdir -p "$O"
export KFORGE_CACHE_DIR=${KFORGE_CACHE_DIR:-/tmp/kforge-cache}
start=$(date +%s)
problems=$(grep -v '^\s*#' "$CASES" | awk 'NF >= 3 { print $1 }' | awk '!seen[$0]++')
failed=0
: > "$O/summary.txt"
# Every program first, compiled JOBS at a time into the cache the evaluations read.
for p in $problems; do
    d=$O/$p; rm -rf "$d"; mkdir -p "$d"
    [ -f "problems/$p.kf" ] || continue
    cp "problems/$p.kf" "$d/$p.suite.kf"
    grep -v '^\s*#' "$CASES" | awk -v p="$p" '$1 == p && NF >= 3' |
    while read -r _ label knobs; do
        # A kernel header: "kernel NAME = KIND OP(ARGS) KNOBS" - keep up to the ')'. Plain
        # KNOBS replace the first kernel's; "k0: KNOBS | k1: KNOBS" replace the named kernels'.
        awk -v knobs="$knobs" 'BEGIN {
                named = knobs ~ /^[A-Za-z_][A-Za-z0-9_]*:/
                if (named) { n = split(knobs, seg, /[|]/)
                    for (j = 1; j <= n; j++) { c = index(seg[j], ":"); k = seg[j]
                        name = substr(k, 1, c - 1); gsub(/[[:space:]]/, "", name)
                        by[name] = substr(k, c + 1); sub(/^[[:space:]]+/, "", by[name])
                        sub(/[[:space:]]+$/, "", by[name]) } } }
            /^[[:space:]]*kernel / && (named || !done) {
                i = index($0, ")"); split($0, w, /[[:space:]]+/); name = w[1] == "" ? w[3] : w[2]
                if (!named) { print substr($0, 1, i) " " knobs; done = 1; next }
                if (name in by) { print substr($0, 1, i) " " by[name]; used[name] = 1; next } }
            { print }
            END { for (k in by) if (!(k in used)) {
                print "sweep: no kernel " k > "/dev/stderr"; exit 1 } }' \
            "problems/$p.kf" > "$d/$p.$label.kf" || rm -f "$d/$p.$label.kf"
    done
done
pre=()
for f in "$O"/*/*.kf; do
    [ -e "$f" ] || continue
    p=$(basename "$(dirname "$f")"); n=$(basename "$f" .kf)
    pre+=("$n|problems/$p.json|$f")
done
mkdir -p "$O/compile"
[ "${#pre[@]}" -gt 0 ] && JOBS=${JOBS:-14} kforge_precompile "$O/compile" "$DEVICE" "${pre[@]}"
echo "compiled ${#pre[@]} programs in $(( $(date +%s) - start )) s" | tee -a "$O/summary.txt"
for p in $problems; do
    [ -f "problems/$p.kf" ] && [ -f "problems/$p.json" ] ||
        { echo "$p: no problems/$p.kf or .json" | tee -a "$O/summary.txt"; failed=1; continue; }
    d=$O/$p
    if [ $(( $(date +%s) - start )) -gt "$TOTAL_S" ]; then
        echo "$p: skipped (TOTAL_S=$TOTAL_S spent)" | tee -a "$O/summary.txt"; continue
    fi
    timeout 240 "$K" eval --device "$DEVICE" --tier quick --problem "problems/$p.json" \
        --programs-dir "$d" --json > "$O/$p.json" 2> "$O/$p.err"
    rc=$?
    python3 - "$O/$p.json" "$p" "$rc" <<'PY' | tee -a "$O/summary.txt" || failed=1
import json, sys
path, prob, rc = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    cands = json.load(open(path))["candidates"]
except (OSError, ValueError, KeyError):
    print(f"{prob}: no report (rc={rc})"); sys.exit(1)
rows = []
for c in cands:
    r = c.get("report", {})
    t = r.get("timing", {}).get("median_ns")
    rows.append((c["label"], r.get("status", "?"), t / 1e3 if t else None,
                 r.get("message", "").replace("\n", " ")[:100], r.get("simulated", False)))
base = next((t for l, s, t, m, sim in rows if l.endswith(".suite.kf") and t), None)
for l, s, t, m, sim in sorted(rows, key=lambda x: (x[2] is None, x[2] or 0)):
    ratio = f"{base / t:5.2f}x" if base and t else "  -  "
    ts = f"{t:9.1f}" if t else "        -"
    print(f"{prob:26s} {l[len(prob) + 1:-3]:28s} {s:8s} {ts} us {ratio}"
          f"{' SIMULATED' if sim else ''} {m if s != 'passed' else ''}")
PY
done
exit $failed
