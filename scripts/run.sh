#!/usr/bin/env bash
# The main job: build kforge (release), evaluate every built-in suite problem's hand-written
# program through the gated pipeline (static check, compile, correctness, anti-gaming, timing),
# then let the optimizer search the whole suite under one wall-clock budget (KFORGE_BUDGET_S,
# default 180 s), recording everything in .kforge/kforge.db; best programs in .kforge/suite/.
# With a GPU it runs on the GPU; without one it runs on the simulated device, and every result
# line says "simulated". Run scripts/setup.sh once first.
set -euo pipefail
cd "$(dirname "$0")/.."

cmake --preset release >/dev/null
cmake --build build/release --target kforge_cli >/dev/null
kforge=build/release/cli/kforge
mkdir -p .kforge

device=auto
if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "run: no GPU found: evaluating on the SIMULATED device (times are modelled, not measured)"
    device=sim
fi

passed=0; failed=0
for spec in problems/*.json; do
    prog="${spec%.json}.kf"
    name=$(basename "${spec%.json}")
    if "$kforge" eval --problem "$spec" --program "$prog" --tier quick --device "$device" \
            --db .kforge/kforge.db > ".kforge/eval-$name.txt" 2>&1; then
        passed=$((passed + 1)); verdict=passed
    else
        failed=$((failed + 1)); verdict="FAILED (see .kforge/eval-$name.txt)"
    fi
    echo "$name: $verdict: $(grep -m1 -E 'median|status' ".kforge/eval-$name.txt" || true)"
done
echo "suite: $passed passed, $failed failed (device: $device)"

echo "run: optimizing the suite for ${KFORGE_BUDGET_S:-180} s of wall time (kforge suite)"
"$kforge" suite problems --device "$device" --budget-wall "${KFORGE_BUDGET_S:-180}" \
    --db .kforge/kforge.db --out .kforge/suite ||
    echo "run: the suite search ended with exit $? (problems it did not reach within the budget are listed above)"
[ "$failed" -eq 0 ]
