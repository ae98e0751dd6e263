#!/usr/bin/env bash
# L1 / L2 normalization on the GPU: for each spec here (16384 x 4096, f32 and bf16), the plan the
# import gave before l1_normalize / l2_normalize existed (NAME.split.kf: separate kernels for
# |x| or x^2, the row sum (+ sqrt, + clamp), and the divide that reads X again) against the one
# row kernel the planner now seeds (NAME.row.kf). The checker accepts both for the same problem.
# Full tier (correctness against the CPU and GPU fp64 references, audit, cold-L2 timing) of both
# programs, then both timed interleaved (A B A B chunks) in one worker session:
#   kforge eval --tier full --interleave --problem NAME.json --program NAME.split.kf --program NAME.row.kf
# One line per program: problem, plan, status, full-tier median, interleaved median, split/this.
#   bash bench/kernels/normalize/run.sh          (about 2-3 minutes)
# environment: K (kforge; default .carry/bin/kforge, else build/*/cli/kforge), OUT
#   (/tmp/kforge-out; results under $OUT/normalize: NAME.json, NAME.err, summary.txt), DEVICE
#   (cuda; sim: a smoke test of this script, every line SIMULATED), JOBS (8 parallel compiles).
# Exit 1 when an evaluation gave no report or a program did not pass, 2 on bad arguments.
set -uo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$R"
. "$R/bench/lib/kforge_cases.sh"
case "${1:-}" in -h|--help) sed -n 2,15p "$0"; exit 0 ;; "") ;; *) echo "no arguments" >&2; exit 2 ;; esac
kforge_default_binary "$R" || { echo "no kforge binary (set K)" >&2; exit 2; }
. "$R/bench/lib/link_build_tree.sh"
kforge_link_build_tree "$K" "$R"
DEVICE=${DEVICE:-cuda}
D=bench/kernels/normalize
O=${OUT:-/tmp/kforge-out}/normalize
mkdir -p "$O/compile"
export KFORGE_CACHE_DIR=${KFORGE_CACHE_DIR:-/tmp/kforge-cache}
names="l2_normalize_f32 l2_normalize_bf16 l1_normalize_f32 l1_normalize_bf16"
pre=()
for n in $names; do
    for v in split row; do pre+=("$n.$v|$D/$n.json|$D/$n.$v.kf"); done
done
start=$(date +%s)
JOBS=${JOBS:-8} kforge_precompile "$O/compile" "$DEVICE" "${pre[@]}"
echo "compiled ${#pre[@]} programs in $(( $(date +%s) - start )) s" | tee "$O/summary.txt"
failed=0
for n in $names; do
    timeout 400 "$K" eval --device "$DEVICE" --tier full --interleave --problem "$D/$n.json" \
        --program "$D/$n.split.kf" --program "$D/$n.row.kf" --json > "$O/$n.json" 2> "$O/$n.err"
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
    print(f"{prob:18s} {plan:5s} {status:8s} full {us(full)} us  interleaved {us(il)} us "
          f"{gbs}  split/this {ratio}{' SIMULATED' if sim else ''} "
          f"{msg if status != 'passed' else ''}")
sys.exit(0 if ok else 1)
PY
done
exit $failed
