#!/usr/bin/env bash
# Issue 26, budget inside a problem: one `kforge optimize` of a network (default: the two ResNet
# basic blocks of examples/kernelbench/80_resnet_basic_blocks.py, 41 kernels in 11 kernel groups,
# three identical 3x3 convs among them) under a wall budget, then a table of where its proposals
# and GPU-seconds went per kernel group (search/group_budget.h) against each group's share of the
# best program's time, % of its bound and gain vs the start, from evidence.json's kernel_groups.
#
# usage (repository root on the GPU machine, the carried binary as bench/search/allocation.sh):
#   bash bench/search/group_budget.sh
# environment: KFORGE (.carry/bin/kforge), DEVICE (cuda; sim: a dry run on model times),
#   FILE (examples/kernelbench/80_resnet_basic_blocks.py), BUDGET_S (300: --budget-wall),
#   ROUNDS (unset: no round limit), OUT (/tmp/kforge-out), TAG (UTC time).
#   Results: $OUT/groups-$TAG/ (import/, out/ with evidence.json, optimize.log, groups.md).
set -uo pipefail
R=$PWD
O=${OUT:-/tmp/kforge-out}
TAG=${TAG:-$(date -u +%Y%m%dT%H%M%SZ)}
D=$O/groups-$TAG
mkdir -p "$D"
K=${KFORGE:-$R/.carry/bin/kforge}
if [ -e "$R/.carry/bin/kforge" ] && [ -f "$R/bench/lib/link_build_tree.sh" ]; then
    . "$R/bench/lib/link_build_tree.sh"
    kforge_link_build_tree "$R/.carry/bin/kforge" "$R"
fi
[ -x "$K" ] || { echo "group_budget.sh: no kforge binary at $K (set KFORGE)" >&2; exit 3; }
[ -n "${KFORGE_PYTHON:-}" ] || [ -x "$R/.venv/bin/python" ] || export KFORGE_PYTHON=python3
DEVICE=${DEVICE:-cuda}
FILE=${FILE:-$R/examples/kernelbench/80_resnet_basic_blocks.py}
BUDGET_S=${BUDGET_S:-300}
"$K" --version > "$D/kforge-version.txt" 2>&1
[ "$DEVICE" = cuda ] && nvidia-smi --query-gpu=name,driver_version --format=csv > "$D/gpu.txt" 2>&1
"$K" import kernelbench "$FILE" -o "$D/import" > "$D/import.log" 2>&1 ||
    { echo "group_budget.sh: the import failed (see $D/import.log)" >&2; exit 1; }
SPEC=$(ls "$D"/import/*.json | head -n 1)
ARGS=(optimize "$SPEC" --device "$DEVICE" --budget-wall "$BUDGET_S" --db "$D/kforge.db"
      -o "$D/out" --progress plain)
[ -n "${ROUNDS:-}" ] && ARGS+=(--rounds "$ROUNDS")
timeout $((BUDGET_S + 300)) "$K" "${ARGS[@]}" > "$D/optimize.log" 2>&1
rc=$?
echo "kforge optimize exited $rc" >> "$D/optimize.log"
[ -f "$D/out/evidence.json" ] || { echo "group_budget.sh: no evidence.json (rc $rc; see $D/optimize.log)" >&2; exit 1; }
python3 - "$D/out/evidence.json" > "$D/groups.md" <<'EOF'
import json, sys
ev = json.load(open(sys.argv[1]))
kg = ev.get("kernel_groups", {})
groups = [g for g in kg.get("groups", []) if g.get("in_best")]
groups.sort(key=lambda g: -g["time_ns"])
tot_p = sum(g["proposals"] for g in groups) or 1
tot_s = sum(g["gpu_s"] for g in groups) or 1
print(f"# {ev['problem']} on {ev['device']}: speedup vs start {ev.get('speedup_vs_start', 1):.3f}, "
      f"attributed GPU-seconds {kg.get('attributed_gpu_s', 0):.1f} "
      f"(whole program {kg.get('whole_program', {}).get('gpu_s', 0):.1f})\n")
print("| group | share of time | % of bound | gain vs start | proposals | % of proposals | GPU-s | % of GPU-s | weight |")
print("|---|---|---|---|---|---|---|---|---|")
for g in groups:
    print(f"| {g['label']} | {100 * g['share']:.1f}% | {100 * g['sol_ns'] / max(g['time_ns'], 1e-9):.1f}% "
          f"| {g['gain_vs_start']:.2f}x | {g['proposals']} | {100 * g['proposals'] / tot_p:.0f}% "
          f"| {g['gpu_s']:.1f} | {100 * g['gpu_s'] / tot_s:.0f}% | {g['weight']:.2f} |")
EOF
cat "$D/groups.md"
