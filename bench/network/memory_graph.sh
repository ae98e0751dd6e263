#!/usr/bin/env bash
# bench/network/memory_graph.sh: issue 26's memory plan and launch mode on multi-kernel
# KernelBench-format examples, on the GPU machine, in one device call (DEADLINE_S, 540 s):
#   1. the examples imported (kforge import kernelbench)
#   2. each exported for this GPU with the planner's start program (kforge export --no-build:
#      plan.json carries the memory plan - arena, peak - and program.kf the program)
#   3. kforge eval --tier full --device cuda --json of that program: correctness gates with
#      intermediates in the shared arena (NaN-poisoned at first write), then the timing gate,
#      which times the sequence on the stream and as one CUDA graph and records both
#   4. bench/network/memory_graph.py: kforge's peak (inputs + params + outputs + arena) against
#      PyTorch eager's torch.cuda.max_memory_allocated (no_grad forward), stream vs graph medians
#      and the choice; $OUT/memory_graph.jsonl and $OUT/memory_graph.md
# Here:        bash bench/export/make_carry.sh build/ci   (then carry .carry.tar.xz)
# GPU machine: tar xJf .carry.tar.xz && bash bench/network/memory_graph.sh
# EXAMPLES overrides the list (examples/kernelbench names without .py).
set -uo pipefail
R=$PWD
O=${OUT:-/tmp/kforge-out}; mkdir -p "$O"
K=${KFORGE:-$R/.carry/bin/kforge}
[ -x "$K" ] || { echo "memory_graph.sh: $K missing (bash bench/export/make_carry.sh here first)"; exit 3; }
if [ -e "$R/bench/lib/link_build_tree.sh" ] && [ -d "$R/.carry" ]; then
    . "$R/bench/lib/link_build_tree.sh"
    kforge_link_build_tree "$K" "$R"
fi
export KFORGE_CACHE_DIR=${KFORGE_CACHE_DIR:-/tmp/kforge-cache} KFORGE_PYTHON=${KFORGE_PYTHON:-python3} KFORGE_HOME=$R
export PYTHONPATH="$R/python${PYTHONPATH:+:$PYTHONPATH}"
W=/tmp/kforge-memgraph
[ "${FRESH:-0}" = 1 ] && rm -rf "$W"
mkdir -p "$W/specs"
T0=$(date +%s)
DEADLINE_S=${DEADLINE_S:-540}
left() { echo $(( DEADLINE_S - ($(date +%s) - T0) )); }
stamp() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
EXAMPLES=${EXAMPLES:-"80_resnet_basic_blocks 84_lstm_two_layer 83_multihead_attention_encoder
    100_dense_cat_channels 101_channel_shuffle 82_shape_branch_shuffle 75_conv2d_max_pool_relu
    06_gemm_gelu_chain"}

stamp "1. import"
files=()
for n in $EXAMPLES; do [ -e "$W/specs/kb_$n.json" ] || files+=("$R/examples/kernelbench/$n.py"); done
[ ${#files[@]} -gt 0 ] && timeout 300 "$K" import kernelbench "${files[@]}" -o "$W/specs" > "$W/import.txt" 2>&1
echo "import: $(ls "$W/specs"/*.json 2>/dev/null | wc -l) specs"

dirs=()
for n in $EXAMPLES; do
    s=$W/specs/kb_$n.json
    [ -e "$s" ] || { echo "$n: not imported ($(grep -m1 "$n" "$W/import.txt" | cut -c1-120))"; continue; }
    d=$W/rows/$n; mkdir -p "$d"; echo "$n" > "$d/NAME"; cp "$R/examples/kernelbench/$n.py" "$d/source.py"
    dirs+=("$d")
    [ "$(left)" -lt 60 ] && { echo "$n: skipped (deadline)"; continue; }
    if [ ! -e "$d/package/spec.json" ] && ! ls "$d"/package/*/program/plan.json > /dev/null 2>&1; then
        stamp "2. export $n"
        timeout $(( $(left) - 30 )) "$K" export "$s" -o "$d/package" --no-build > "$d/export.txt" 2>&1 \
            || { echo "$n export rc=$?: $(tail -2 "$d/export.txt")"; continue; }
    fi
    [ -s "$d/eval.json" ] && continue
    stamp "3. eval $n (full tier: stream and graph)"
    timeout $(( $(left) - 20 )) "$K" eval "$d/package/spec.json" --program "$d/package/program.kf" \
        --tier full --device cuda --json > "$d/eval.json" 2> "$d/eval.err"
    echo "$n eval rc=$?"
done

stamp "4. table"
python3 "$R/bench/network/memory_graph.py" "${dirs[@]}" | tee "$O/memory_graph.md"
