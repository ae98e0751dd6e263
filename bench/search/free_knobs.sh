#!/usr/bin/env bash
# Issue 27 item 3: evaluations per GPU-machine minute on GEMM problems with launch knobs free
# (raster, swizzle, split-K and stream-K of a compiled CUTLASS kernel cost an evaluation, not an
# nvcc compile: codegen/launch_knobs.h) against the old behaviour forced by
# KFORGE_BAKE_LAUNCH_KNOBS=1 (every knob baked into the source: each value its own compile).
# Same binary, same budget, same machine, the two modes back to back per problem (free first,
# then baked), each run on a fresh compile cache and its own store.
#
# Per run (runs.jsonl, table.md): wall seconds of `kforge optimize`, evaluations recorded
# (quick + full tiers, every status), timed evaluations (passed), evaluations per wall minute,
# the same after the start program's first full evaluation ("search minutes": the start's compile
# and correctness cases are the same fixed cost in both modes), nvcc compiles (the cache's
# compile_history.jsonl lines), candidates proposed as free moves, and the best time. The table
# gives the free/baked ratio per problem and their geomean (the issue's target: >= 5x).
#
# usage (repository root on the GPU machine, the carried binary as bench/suite_cold/run.sh uses):
#   PACK=1 bash bench/lib/make_carry.sh build/release       (here, once; carry .carry.tar.xz)
#   bash bench/search/free_knobs.sh [PROBLEM...]            (default: gemm_large_k_bf16)
#   python3 bench/search/free_knobs_table.py DIR...         (merges the runs.jsonl of several calls)
# environment: KFORGE (.carry/bin/kforge), BUDGET_S (120: --budget-wall of each run), DEVICE
#   (cuda; sim is a dry run: the simulated device compiles nothing, so both modes are alike),
#   START (hand: the problem's problems/NAME.kf; seed: the planner's start), OUT (/tmp/kforge-out),
#   TAG (UTC time), GPU_TEST (1: run the carried test_search_free_knobs_gpu first, ~2 min).
#   A device call runs 10 minutes at most and a run takes its budget plus the start's compile and
#   correctness cases (~60-90 s on a CUTLASS GEMM): one problem per call at BUDGET_S=120 (two runs,
#   ~6 min; ~8 with GPU_TEST=1), or two at BUDGET_S=60; call again with the next problems.
set -uo pipefail
R0=$PWD
O=${OUT:-/tmp/kforge-out}
TAG=${TAG:-$(date -u +%Y%m%dT%H%M%SZ)}
D=$O/free_knobs-$TAG
mkdir -p "$D/logs"
K=${KFORGE:-$R0/.carry/bin/kforge}
if [ -e "$R0/.carry/bin/kforge" ] && [ -f "$R0/bench/lib/link_build_tree.sh" ]; then
    . "$R0/bench/lib/link_build_tree.sh"
    kforge_link_build_tree "$R0/.carry/bin/kforge" "$R0"
fi
[ -x "$K" ] || { echo "free_knobs.sh: no kforge binary at $K (set KFORGE)" >&2; exit 3; }
DEVICE=${DEVICE:-cuda}
BUDGET_S=${BUDGET_S:-120}
START=${START:-hand}
problems=("$@")
[ ${#problems[@]} -gt 0 ] || problems=(gemm_large_k_bf16)
"$K" --version > "$D/kforge-version.txt" 2>&1
[ "$DEVICE" = cuda ] && nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > "$D/gpu.txt" 2>&1
echo "free_knobs $TAG: device $DEVICE, budget ${BUDGET_S}s, start $START, problems ${problems[*]}" | tee "$D/log.txt"

# run PROBLEM MODE: one optimize run; appends its line to runs.jsonl
run() {
    local n=$1 mode=$2 spec=problems/$1.json
    local db=$D/$n-$mode.db cache=/tmp/kforge-free-knobs-cache/$TAG/$n-$mode
    rm -rf "$cache" && mkdir -p "$cache"
    if [ "$START" = seed ]; then mkdir -p "$D/specs" && cp "$spec" "$D/specs/$n.json" && spec=$D/specs/$n.json; fi
    local bake=0; [ "$mode" = baked ] && bake=1
    local s e rc
    s=$(date +%s.%N)
    KFORGE_BAKE_LAUNCH_KNOBS=$bake KFORGE_CACHE_DIR=$cache timeout -k 10 $((BUDGET_S + 200)) \
        "$K" optimize "$spec" --device "$DEVICE" --budget-wall "$BUDGET_S" --db "$db" \
        --out "$D/$n-$mode" > "$D/logs/$n-$mode.log" 2>&1
    rc=$?
    e=$(date +%s.%N)
    cp "$cache/compile_history.jsonl" "$D/logs/$n-$mode.compile_history.jsonl" 2>/dev/null
    python3 - "$n" "$mode" "$db" "$cache" "$s" "$e" "$rc" "$D/logs/$n-$mode.log" >> "$D/runs.jsonl" <<'PY'
import json, os, re, sqlite3, sys
from datetime import datetime, timezone
n, mode, db, cache, s, e, rc, log = sys.argv[1:]
s, e = float(s), float(e)
row = {"problem": n, "mode": mode, "rc": int(rc), "wall_s": round(e - s, 1)}
def ts(t):
    f = "%Y-%m-%dT%H:%M:%S.%fZ" if "." in t else "%Y-%m-%dT%H:%M:%SZ"
    return datetime.strptime(t, f).replace(tzinfo=timezone.utc).timestamp()
try:
    con = sqlite3.connect(db)
    ev = con.execute("SELECT e.tier, e.status, e.created_at, c.content_hash, c.proposer FROM evaluations e "
                     "JOIN candidates c ON c.id = e.candidate_id WHERE e.tier IN ('quick', 'full') "
                     "ORDER BY e.id").fetchall()
    row["evaluations"] = len(ev)
    row["timed"] = sum(1 for t in ev if t[1] == "passed")
    # the start: the first candidate evaluated; the search's minutes begin at its first full tier
    start_hash = ev[0][3] if ev else None
    t0 = next((ts(t[2]) for t in ev if t[3] == start_hash and t[0] == "full"), None)
    after = [t for t in ev if t[3] != start_hash and t0 is not None and ts(t[2]) >= t0]
    row["search_s"] = round(e - t0, 1) if t0 else None
    row["search_evaluations"] = len(after)
    row["proposed"] = con.execute("SELECT COUNT(*) FROM candidates").fetchone()[0]
    row["proposed_free"] = con.execute("SELECT COUNT(*) FROM candidates WHERE move LIKE 'free:%'").fetchone()[0]
except Exception as x:  # a run that left no store
    row["error"] = str(x)
try:
    row["compiles"] = sum(1 for _ in open(os.path.join(cache, "compile_history.jsonl")))
except OSError:
    row["compiles"] = 0
text = open(log, errors="replace").read()
m = re.search(r"^best: .*?([0-9.]+) us", text, re.M)
row["best_us"] = float(m.group(1)) if m else None
w = row["wall_s"] / 60
row["evals_per_min"] = round(row.get("evaluations", 0) / w, 2) if w > 0 else None
if row.get("search_s"):
    row["search_evals_per_min"] = round(row["search_evaluations"] / (row["search_s"] / 60), 2)
print(json.dumps(row))
PY
    tail -1 "$D/runs.jsonl" | tee -a "$D/log.txt"
    rm -rf "$cache"
}

# GPU_TEST=1: first the carried gpu test (launch-knob variants on one compile, ~2 min)
if [ "${GPU_TEST:-0}" = 1 ] && [ -x "$R0/.carry/bin/test_search_free_knobs_gpu" ]; then
    LD_LIBRARY_PATH="$R0/.carry/lib" timeout 400 "$R0/.carry/bin/test_search_free_knobs_gpu" \
        > "$D/gpu_test.txt" 2>&1
    echo "test_search_free_knobs_gpu rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$D/gpu_test.txt" | tr '\n' ' ')" |
        tee -a "$D/log.txt"
fi

for p in "${problems[@]}"; do
    [ -f "problems/$p.json" ] || { echo "SKIP $p: no problems/$p.json" | tee -a "$D/log.txt"; continue; }
    run "$p" free
    run "$p" baked
done
python3 "$R0/bench/search/free_knobs_table.py" "$D" | tee "$D/table.md"
