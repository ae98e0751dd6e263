#!/usr/bin/env bash
# GPU check of operand staging for Hopper tf32 GEMMs (codegen/gemm_stage.h,
# kernels/stage_operand.cuh): math tf32x3 on the sm90 TMA/wgmma schedules as one tf32 GEMM over
# K' = 3K of staged hi/lo operands with the accumulator promoted every 4 k-blocks
# (codegen/lower_gemm.cpp), and math tf32 with an N-major B staged K-major. For each problem, the
# hand-written program of problems/*.kf ("hand") and other configurations, each through
# `kforge eval --device cuda --tier full` (gates, then the full timing protocol).
#   gemm_f32_4096, matmul_rowsum_f32, linear_bias_sigmoid_f32   fp32_strict: hand = staged,
#       promoted 3xTF32, cooperative 128x128x32 cluster 2x1 (the seed); variants: cluster 1x1,
#       128x192, and the multistage 3xTF32 (CUTLASS 2.x mma.sync) they replaced
#   gemm_tf32_4096                                              tf32: hand = its cooperative
#       program (staged K-major B); variants: cluster 1x1, 128x256, pingpong
# One device call, from the repository root on the GPU machine:
#   bash bench/kernels/tf32_staged_check.sh [PROBLEM...]     (default: all four)
#   bash bench/kernels/tf32_staged_check.sh --fp32-strict    the three fp32_strict GEMM problems,
#       hand and multistage only (6 evaluations)
# environment: K (kforge binary; default .carry/bin/kforge, else build/*/cli/kforge)
#   OUT (/tmp/kforge-out; results under $OUT/tf32s: summary.txt, results.json(l), per case
#   NAME.kf, NAME.json/.err/.lower.txt and NAME.lowered/ with kernels.cu and plan.json)
#   JOBS (8: parallel compiles)  TIER (full)  DEVICE (cuda; sim: a smoke test of the script,
#   every time SIMULATED)
# Prints one line per case: name, rc, status, median (us), the precision profile (median
# relative error of each output in each correctness gate, and what it looks like when flagged),
# message. Exit 1 when a case failed.
set -uo pipefail
R=$(cd "$(dirname "$0")/../.." && pwd)
cd "$R"
case "${1:-}" in -h|--help) sed -n 2,24p "$0"; exit 0 ;; esac
only_strict=0
if [ "${1:-}" = --fp32-strict ]; then
    only_strict=1
    shift
    set -- gemm_f32_4096 matmul_rowsum_f32 linear_bias_sigmoid_f32
fi
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
tail="acc f32 raster along_n swizzle 8 splitk 1"
for p in "${problems[@]}"; do
    cases+=("${p}.hand|$p|problems/$p.kf")
    if [ "$p" = gemm_tf32_4096 ]; then
        variant "$p" "$p.coop_128x128_c1x1" "tile 128x128x32 cluster 1x1 stages auto schedule cooperative math tf32 $tail"
        variant "$p" "$p.coop_128x256_c2x1" "tile 128x256x32 cluster 2x1 stages auto schedule cooperative math tf32 $tail"
        variant "$p" "$p.pingpong_128x128_c2x1" "tile 128x128x32 cluster 2x1 stages auto schedule pingpong math tf32 $tail"
        continue
    fi
    # 3xTF32: the multistage program the staged one replaced (the fp32-level reference:
    # median 5.1e-7 at 4096^3), then the other promoting tiles (128x256 spills: refused).
    variant "$p" "$p.multistage" "tile 128x128x32 cluster 1x1 stages 4 schedule multistage math tf32x3 $tail"
    [ $only_strict = 1 ] && continue
    variant "$p" "$p.coop_128x128_c1x1" "tile 128x128x32 cluster 1x1 stages auto schedule cooperative math tf32x3 $tail"
    variant "$p" "$p.coop_128x192_c2x1" "tile 128x192x32 cluster 2x1 stages auto schedule cooperative math tf32x3 $tail"
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
    # Precision profile (eval/gates.h): per correctness gate and output, the worst median
    # relative error over the gate's rounds (input distributions), and what it looks like.
    profile = {}
    for g in j.get("gates", []):
        ev = g.get("evidence") or {}
        comps = [r.get("comparison") or {} for r in ev.get("rounds", [])]
        if "comparison" in ev:
            comps.append(ev["comparison"])
        for c in comps:
            for te in c.get("tensors", []):
                pr = te.get("profile") or {}
                if pr.get("median_rel_err") is None:
                    continue
                key = (g.get("gate"), te.get("tensor"))
                old = profile.get(key)
                if old is None or pr["median_rel_err"] > old["median_rel_err"]:
                    profile[key] = {"gate": key[0], "tensor": key[1],
                                    "median_rel_err": pr["median_rel_err"],
                                    "looks_like": pr.get("looks_like", "")}
    profile = list(profile.values())
    row.update(status=j.get("status"), median_us=(t.get("median_ns") or 0) / 1e3 or None,
               message=j.get("message", "").replace("\n", " ")[:300],
               simulated=bool(j.get("simulated")), profile=profile)
open(jsonl, "a").write(json.dumps(row) + "\n")
med = "%.2f" % row["median_us"] if row.get("median_us") else "-"
prof = " ".join("%s:%s=%.2e%s" % (p["gate"], p["tensor"], p["median_rel_err"],
                                  "(looks like " + p["looks_like"] + ")" if p["looks_like"] else "")
                for p in row.get("profile", [])) or "-"
print(row["status"], med, "profile", prof, row.get("message", "") +
      (" (SIMULATED device)" if row.get("simulated") else ""))
PY
)
    echo "$name tier=$TIER rc=$rc wall=$(( $(date +%s) - s ))s status/median_us/profile/message: $line" |
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
