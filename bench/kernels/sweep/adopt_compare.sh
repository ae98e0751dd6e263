#!/usr/bin/env bash
# One device call: knob sweep (run.sh CASES, quick tier), then each problem's fastest passed
# variant that beats its suite program by MIN_GAIN (default 0.02) replaces problems/P.kf IN THIS
# CHECKOUT (the device's copy; the lead commits the same change here after reading adopted.txt),
# then bench/kernels/compare/run.sh times the problems of CASES against PyTorch.
#   bash bench/kernels/sweep/adopt_compare.sh CASES [compare run.sh options...]
# environment: OUT (/tmp/kforge-out): $OUT/sweep (run.sh), $OUT/adopted.txt (one line a problem:
#   kept or adopted, with the quick-tier medians), $OUT/compare.tgz (compare/run.sh);
#   SWEEP_S (300: the sweep's TOTAL_S), TOTAL_S (compare's guard), MIN_GAIN.
set -uo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$R"
CASES=${1:?usage: adopt_compare.sh CASES [compare options]}; shift
O=${OUT:-/tmp/kforge-out}
mkdir -p "$O"
TOTAL_S=${SWEEP_S:-300} OUT=$O bash bench/kernels/sweep/run.sh "$CASES"
echo "sweep rc=$?"
problems=$(grep -v '^\s*#' "$CASES" | awk 'NF >= 3 { print $1 }' | awk '!seen[$0]++')
for p in $problems; do
    python3 - "$O/sweep/$p.json" "$p" "${MIN_GAIN:-0.02}" "$O/sweep/$p" <<'PY' | tee -a "$O/adopted.txt"
import json, os, shutil, sys
path, prob, gain, folder = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
try:
    cands = json.load(open(path))["candidates"]
except (OSError, ValueError, KeyError):
    print(f"{prob}: kept (no sweep report)"); sys.exit(0)
t = {c["label"]: c.get("report", {}).get("timing", {}).get("median_ns") for c in cands
     if c.get("report", {}).get("status") == "passed"}
suite = t.get(f"{prob}.suite.kf")
best = min((v, k) for k, v in t.items() if v) if any(t.values()) else None
if not suite or not best or best[0] * (1 + gain) > suite:
    print(f"{prob}: kept (suite {suite and suite / 1e3:.1f} us, best {best and best[1]} "
          f"{best and best[0] / 1e3:.1f} us)"); sys.exit(0)
shutil.copy(os.path.join(folder, best[1]), f"problems/{prob}.kf")
print(f"{prob}: adopted {best[1]} ({best[0] / 1e3:.1f} us quick vs suite {suite / 1e3:.1f} us)")
PY
done
OUT=$O bash bench/kernels/compare/run.sh "$@" $problems
