#!/usr/bin/env bash
# bench/mcp: a scripted MCP client drives `kforge mcp` (evaluate + profile) on three problems on
# the GPU and compares the numbers with `kforge eval --json` / `kforge profile --json` on the same
# candidates (bench/mcp/client.py says how). Results: $OUT/mcp_bench.{jsonl,md}, the server's
# log $OUT/mcp_server.log.
# Here:        bash bench/lib/make_carry.sh build/ci     (then carry .carry.tar.xz)
# GPU machine: tar xJf .carry.tar.xz && bash bench/mcp/run.sh
# PROBLEMS overrides the problems (names under problems/; default three NVRTC-built ones, no
# CUTLASS compile); DEVICE=sim runs the same on the simulated device (a dry run here, with
# K=build/ci/cli/kforge); TIER=full uses the full tier; RAW=1 forces the minimal JSON-RPC client.
set -uo pipefail
R=$PWD
O=${OUT:-/tmp/kforge-out}; mkdir -p "$O"
K=${K:-$R/.carry/bin/kforge}
[ -x "$K" ] || { echo "run.sh: $K missing (bash bench/lib/make_carry.sh build/ci here first)"; exit 3; }
if [ -e "$R/.carry/bin/kforge" ]; then
    . "$R/bench/lib/link_build_tree.sh"
    kforge_link_build_tree "$K" "$R"
fi
export KFORGE_CACHE_DIR=${KFORGE_CACHE_DIR:-/tmp/kforge-cache} KFORGE_HOME=$R
PY=python3
[ -x "$R/.venv/bin/python" ] && "$R/.venv/bin/python" -c 'import mcp' 2>/dev/null && PY=$R/.venv/bin/python
PROBLEMS=${PROBLEMS:-"row_sum_f32 softmax_short_rows_f32 layer_norm_f32"}
T0=$(date +%s)
"$PY" "$R/bench/mcp/client.py" --kforge "$K" --repo "$R" --work /tmp/kforge-mcp-bench --out "$O" \
    --device "${DEVICE:-cuda}" --tier "${TIER:-quick}" ${RAW:+--raw} $PROBLEMS 2>&1 | tee "$O/mcp_bench.log"
rc=${PIPESTATUS[0]}
echo "bench/mcp: exit $rc after $(( $(date +%s) - T0 )) s"
exit "$rc"
