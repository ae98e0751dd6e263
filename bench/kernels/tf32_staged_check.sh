#!/usr/bin/env bash
# GPU check of operand staging for Hopper tf32 GEMMs (codegen/gemm_stage.h,
# kernels/stage_operand.cuh): math tf32x3 on the sm90 TMA/wgmma schedules as one tf32 GEMM over
# K' = 3K of staged hi/lo operands, and math tf32 with an N-major B staged K-major. For each
# problem, the hand-written program of problems/*.kf ("hand") and staged configurations, each
# through `kforge eval --device cuda --tier full` (gates, then the full timing protocol).
#   gemm_f32_4096, matmul_rowsum_f32, linear_bias_sigmoid_f32   fp32_strict: hand = multistage
#                                                               3xTF32 (CUTLASS 2.x, mma.sync)
#   gemm_tf32_4096                                              tf32: hand = its cooperative
#       program, which this lowering now stages too (it ran transposed through the
#       register-sourced mainloop before: 652 us on 2026-12-01)
# One device call, from the repository root on the GPU machine:
#   bash bench/kernels/tf32_staged_check.sh [PROBLEM...]     (default: all four)
# environment: K (kforge binary; default .carry/bin/kforge, else build/*/cli/kforge)
#   OUT (/tmp/kforge-out; results under $OUT/tf32s: summary.txt, results.json(l), per case
#   NAME.kf, NAME.json/.err/.lower.txt and NAME.lowered/ with kernels.cu and plan.json)
#   JOBS (8: parallel compiles)  TIER (full)  DEVICE (cuda; sim: a smoke test of the script,
#   every time SIMULATED)
# Prints one line per case: name, rc, status, median (us), message. Exit 1 when a case failed.
set -uo pipefail
R=$(cd "$(dirname "$0")/../.." && pwd)
cd "$R"
case "${1:-}" in -h|--help) sed -n 2,21p "$0"; exit 0 ;; esac
. "$R/bench/lib/kforge_cases.sh"
kforge_default_binary "$R" || { echo "no kforge binary (set K)" >&2; exit 3; }
O=${OUT:-/tmp/kforge-out}/tf32s; mkdir -p "$O"
DEVICE=${DEVICE:-cuda}
TIER=${TIER:-full}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
export KFORGE_CACHE_DIR=${KFORGE_CACHE_DIR:-/tmp/kforge-cache}
. "$R/bench/lib/link_build_tree.sh"
kforge_link_build_tree "$K" "$R"
problems=("$@")
[ ${#problems[@]} -gt 0 ] ||
    problems=(gemm_f32_4096 matmul_rowsum_f32 linear_bias_sigmoid_f32 gemm_tf32_4096)
for p in "${problems[@]}"; do
    [ -f "problems/$p.json" ] && [ -f "problems/$p.kf" ] || { echo "unknown problem $p" >&2; exit 2; }
done

# Cases: name|problem|program file
cases=()
# variant PROBLEM NAME KNOBS: the problem's hand program with the first gemm kernel's knobs
# (everything after its operands, up to the end of the line) replaced by KNOBS.
variant() {
    local prob=$1 name=$2 knobs=$3
    python3 - "problems/$prob.kf" "$knobs" > "$W/$name.kf" <<'PY' || { echo "variant $name failed" >&2; return; }
import re, sys
text = open(sys.argv[1]).read()
out, n = re.subn(r"^(kernel \w+ = gemm\([^)]*\)).*$", lambda m: m.group(1) + " " + sys.argv[2],
                 text, count=1, flags=re.M)
if n != 1:
    sys.exit("no gemm kernel line in " + sys.argv[1])
sys.stdout.write(out)
PY
    cases+=("$name|$prob|$W/$name.kf")
}
for p in "${problems[@]}"; do
    cases+=("${p}.hand|$p|problems/$p.kf")
    case "$p" in
        gemm_tf32_4096) math=tf32 ;;
        *) math=tf32x3 ;;
    esac
    variant "$p" "$p.coop_128x128_c1x1" "tile 128x128x32 cluster 1x1 stages auto schedule cooperative math $math acc f32 raster along_n swizzle 8 splitk 1"
    variant "$p" "$p.coop_128x256_c2x1" "tile 128x256x32 cluster 2x1 stages auto schedule cooperative math $math acc f32 raster along_n swizzle 8 splitk 1"
    variant "$p" "$p.pingpong_128x128_c2x1" "tile 128x128x32 cluster 2x1 stages auto schedule pingpong math $math acc f32 raster along_n swizzle 8 splitk 1"
done

# Lower every program (kernels.cu and plan.json under NAME.lowered: the staging launches and
# workspace buffers can be read there), compile them in parallel (the compile cache serves the
# evaluations), then evaluate one at a time.
pre=()
for c in "${cases[@]}"; do
    IFS='|' read -r name prob prog <<< "$c"
    cp "$prog" "$O/$name.kf"
    pre+=("$name|problems/$prob.json|$prog")
done
kforge_precompile "$O" "$DEVICE" "${pre[@]}"

# summary.txt and results.jsonl accumulate over calls with the same OUT (one call per problem
# subset fits the device's per-command limit); results.json is rebuilt from all of them.
failed=0
for c in "${cases[@]}"; do
    IFS='|' read -r name prob prog <<< "$c"
    s=$(date +%s)
    timeout 300 "$K" eval --device "$DEVICE" --tier "$TIER" --problem "problems/$prob.json" \
        --program "$prog" --json > "$O/$name.json" 2> "$O/$name.err"
    rc=$?
    line=$(python3 - "$O/$name.json" "$O/$name.err" "$name" "$prob" "$rc" "$O/results.jsonl" <<'PY'
import json, sys
path, err_path, name, prob, rc, jsonl = sys.argv[1:7]
row = {"case": name, "problem": prob, "rc": int(rc)}
try:
    j = json.load(open(path))
except Exception:
    err = open(err_path).read().strip().splitlines()
    row.update(status="no_report", message=err[-1][:300] if err else "(no stderr)")
else:
    t = j.get("timing", {})
    row.update(status=j.get("status"), median_us=(t.get("median_ns") or 0) / 1e3 or None,
               message=j.get("message", "").replace("\n", " ")[:300],
               simulated=bool(j.get("simulated")))
open(jsonl, "a").write(json.dumps(row) + "\n")
med = "%.2f" % row["median_us"] if row.get("median_us") else "-"
print(row["status"], med, row.get("message", "") + (" (SIMULATED device)" if row.get("simulated") else ""))
PY
)
    echo "$name tier=$TIER rc=$rc wall=$(( $(date +%s) - s ))s status/median_us/message: $line" |
        tee -a "$O/summary.txt"
    [ "${line%% *}" = passed ] || failed=1
done
python3 - "$O/results.jsonl" "$O/results.json" "$TIER" "$DEVICE" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
json.dump({"tier": sys.argv[3], "device": sys.argv[4], "cases": rows},
          open(sys.argv[2], "w"), indent=1)
PY
exit $failed
