#!/usr/bin/env bash
# ncu (`kforge profile`) of fused GEMM problems next to their plain-store twins (make_plain.py),
# and of any other suite problem named: where a fused epilogue's extra time goes (clocks, issue
# stalls, pipes), the "why (ncu evidence)" issue 4 asks for where a target is missed.
#
# usage: bash bench/kernels/epilogue_cost/profile.sh OUTDIR PROBLEM...
#   PROBLEM   name in problems/ (problems/NAME.json + NAME.kf); a problem whose program has a gemm
#             kernel is profiled with its twin NAME_plain, any other alone; or SPEC.json:PROGRAM.kf
#             (an imported problem and its program, profiled alone under the spec's file name)
# Writes OUTDIR/NAME.json (kforge profile --json), OUTDIR/NAME.err, the twins, and
# OUTDIR/table.txt: one column per profiled program, one row per metric of the diagnosis, for
# the largest launch of each kernel. ncu runs with --clock-control none (kforge profile's
# default): the clocks are the card's own under its power cap, as in the timings.
# K=<kforge> (default .carry/bin/kforge, else build/release/cli/kforge); TOTAL_S=500 stops
# starting profiles past that many seconds.
set -uo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd)
. "$R/bench/lib/kforge_cases.sh"
kforge_bench_setup "$R"
O=${1:?usage: profile.sh OUTDIR PROBLEM...}
shift
[ $# -gt 0 ] || { echo "profile.sh: name at least one problem" >&2; exit 2; }
mkdir -p "$O"
T0=$(date +%s)
TOTAL_S=${TOTAL_S:-500}
names=()
profile_one() {  # name problem.json program.kf
    if [ $(( $(date +%s) - T0 )) -ge "$TOTAL_S" ]; then
        echo "skipped $1: past TOTAL_S=$TOTAL_S" | tee -a "$O/skipped.txt"
        return
    fi
    # kforge profile's own ncu command line, plus the SM clock, run here so that the raw page
    # (every metric of every launch) is kept; then kforge's diagnosis of that page
    local args
    args=$("$K" profile --problem "$2" --program "$3" --device "$DEVICE" --print-ncu-args) || return
    args=$(sed -E "s#--metrics ([^ ]+)#--metrics \1,sm__cycles_elapsed.avg.per_second#; s# [^ ]*kforge(\.real)? eval # $K eval #" <<< "$args")
    echo "$args" > "$O/$1.cmd"
    timeout 300 bash -c "$args" > "$O/$1.csv" 2> "$O/$1.err"
    echo "$1 rc=$? $(( $(date +%s) - T0 ))s"
    "$K" profile --csv "$O/$1.csv" --json > "$O/$1.json" 2>> "$O/$1.err"
    names+=("$1")
}
for p in "$@"; do
    if [[ $p == *.json:*.kf ]]; then  # an imported problem and its program
        spec=${p%%:*} prog=${p#*:}
        [ -f "$spec" ] && [ -f "$prog" ] || { echo "profile.sh: no $spec or $prog" >&2; exit 2; }
        n=$(basename "$spec" .json)
        profile_one "$n" "$spec" "$prog"
        continue
    fi
    spec=$R/problems/$p.json prog=$R/problems/$p.kf
    [ -f "$spec" ] && [ -f "$prog" ] || { echo "profile.sh: no problems/$p.json + .kf" >&2; exit 2; }
    profile_one "$p" "$spec" "$prog"
    if grep -q '= *gemm(' "$prog"; then
        python3 "$R/bench/kernels/epilogue_cost/make_plain.py" "$spec" "$prog" "$O" --kforge "$K" \
            --no-sim > "$O/${p}_twin.txt" 2>&1 || { echo "twin of $p failed"; cat "$O/${p}_twin.txt"; continue; }
        profile_one "${p}_plain" "$O/${p}_plain.json" "$O/${p}_plain.kf"
    fi
done
python3 - "$O" "${names[@]}" > "$O/table.txt" <<'PY'
# one column per kernel of each profiled program (its longest launch), one row per metric
import csv, json, os, sys
out, names = sys.argv[1], sys.argv[2:]
want = ["gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second",
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
        "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "lts__throughput.avg.pct_of_peak_sustained_elapsed",
        "sm__warps_active.avg.pct_of_peak_sustained_active", "launch__registers_per_thread",
        "launch__grid_size", "launch__block_size", "smsp__inst_executed.sum",
        "dram__bytes_read.sum", "dram__bytes_write.sum"]
cols = []
for n in names:
    path = os.path.join(out, n + ".csv")
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        print(f"{n}: {e}"); continue
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        print(f"{n}: no ncu raw page in {path}"); continue
    rows = list(csv.DictReader(lines[start:]))
    rows = [r for r in rows if r.get("ID", "").isdigit()]  # drop the units row
    longest = {}
    for r in rows:
        k = r.get("Kernel Name", "?")
        t = float(r.get("gpu__time_duration.sum", "0").replace(",", "") or 0)
        if k not in longest or t > longest[k][0]:
            longest[k] = (t, r)
    diag = {}
    try:
        for d in json.load(open(os.path.join(out, n + ".json"))):
            diag[d["kernel"]] = d["bottleneck"]
    except Exception:
        pass
    for k, (t, r) in longest.items():
        stalls = sorted(((float(v.replace(",", "") or 0), m.split("stalled_")[1].split("_per")[0])
                         for m, v in r.items() if "issue_stalled" in m and v), reverse=True)[:3]
        cols.append((f"{n}:{k.split('(')[0]}", diag.get(k, "?"), r, stalls))
print("metric | " + " | ".join(c[0] for c in cols))
print("class | " + " | ".join(c[1] for c in cols))
for m in want:
    print(m + " | " + " | ".join(c[2].get(m, "") for c in cols))
print("top stalls | " + " | ".join(", ".join(f"{s} {v:.2f}" for v, s in c[3]) for c in cols))
PY
cat "$O/table.txt"
