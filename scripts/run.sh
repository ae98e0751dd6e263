#!/usr/bin/env bash
# The main job: build kforge (release) and evaluate every built-in suite problem's hand-written
# program through the gated pipeline (static check, compile, correctness, anti-gaming, timing),
# recording everything in .kforge/kforge.db, then print SOL bounds beside the results.
# With a GPU it runs on the GPU; without one it runs on the simulated device, and every result
# line says "simulated". Run scripts/setup.sh once first.
set -euo pipefail
cd "$(dirname "$0")/.."

cmake --workflow --preset release >/dev/null
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
[ "$failed" -eq 0 ]
