# Sourced by the GPU scripts that compare a split plan with a one-kernel plan of the same problem
# (bench/kernels/letval, bench/kernels/normalize).
#
#   kforge_plan_pair DIR OUT_NAME VARIANT NAME...
#       for each NAME: DIR/NAME.json, DIR/NAME.split.kf and DIR/NAME.VARIANT.kf. Compiles all the
#       programs in parallel (JOBS, default 8), then per problem the full tier of both programs
#       (correctness against the CPU and GPU fp64 references, audit, cold-L2 timing) and both timed
#       interleaved (A B A B chunks) in one worker session:
#         kforge eval --tier full --interleave --problem NAME.json --program NAME.split.kf --program NAME.VARIANT.kf
#       One line per program: problem, plan, status, full-tier median, interleaved median, GB/s
#       (bytes the evaluator counts over the interleaved median), split/this. Results under
#       $OUT/OUT_NAME (NAME.json, NAME.err, summary.txt). Needs R (the repository root), K and
#       DEVICE set (kforge_cases.sh). Returns 1 when an evaluation gave no report or a program
#       did not pass.
kforge_plan_pair() {
    local D=$1 oname=$2 variant=$3 n v
    shift 3
    local O=${OUT:-/tmp/kforge-out}/$oname
    mkdir -p "$O/compile"
    export KFORGE_CACHE_DIR=${KFORGE_CACHE_DIR:-/tmp/kforge-cache}
    local pre=()
    for n in "$@"; do
        for v in split "$variant"; do pre+=("$n.$v|$D/$n.json|$D/$n.$v.kf"); done
    done
    local start
    start=$(date +%s)
    JOBS=${JOBS:-8} kforge_precompile "$O/compile" "$DEVICE" "${pre[@]}"
    echo "compiled ${#pre[@]} programs in $(( $(date +%s) - start )) s" | tee "$O/summary.txt"
    local failed=0 rc
    for n in "$@"; do
        timeout 400 "$K" eval --device "$DEVICE" --tier full --interleave --problem "$D/$n.json" \
            --program "$D/$n.split.kf" --program "$D/$n.$variant.kf" --json > "$O/$n.json" 2> "$O/$n.err"
        rc=$?
        python3 - "$O/$n.json" "$n" "$rc" <<'PY' | tee -a "$O/summary.txt" || failed=1
import json, sys
path, prob, rc = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    d = json.load(open(path))
    cands = d["candidates"]
except (OSError, ValueError, KeyError):
    print(f"{prob}: no report (rc={rc})"); sys.exit(1)
inter = {}
for p in (d.get("timing") or {}).get("programs", []):
    reps = p.get("repetitions") or []
    if reps: inter[p.get("program_hash")] = reps[0]["stats"]["median_ns"]
rows, ok = [], True
for c in cands:
    r = c.get("report", {})
    full = r.get("timing", {}).get("median_ns")
    rows.append((c["label"].split(".")[-2], r.get("status", "?"), full,
                 inter.get(r.get("program_hash")), r.get("bytes"), r.get("simulated", False),
                 r.get("message", "").replace("\n", " ")[:120]))
    ok &= r.get("status") == "passed"
split = next((r for r in rows if r[0] == "split"), None)
for plan, status, full, il, nbytes, sim, msg in rows:
    us = lambda t: f"{t / 1e3:9.1f}" if t else "        -"
    gbs = f"{nbytes / il:6.0f} GB/s" if nbytes and il else "    -     "
    ratio = f"{split[3] / il:5.2f}x" if split and split[3] and il else "  -  "
    print(f"{prob:26s} {plan:6s} {status:8s} full {us(full)} us  interleaved {us(il)} us "
          f"{gbs}  split/this {ratio}{' SIMULATED' if sim else ''} "
          f"{msg if status != 'passed' else ''}")
sys.exit(0 if ok else 1)
PY
    done
    return $failed
}
