#!/usr/bin/env bash
# Copy kernels on the GPU (issue 25's data movement: codegen/lower_copy.cpp, kernels/copy.cuh):
# five data-movement problems at network sizes (a dense cat of four bf16 inputs along channels,
# an NCHW -> NHWC permute in f32, a channel shuffle written as view-transpose-view, a strided
# channel slice in bf16, a flatten that is a problem output), each planner start program through
# every gate (`kforge eval --tier full`: correctness_full against the GPU fp64 reference) with its
# median time and the bandwidth it reaches (bytes read + written / time; % of the calibrated
# copy bandwidth in bench/calibration/h200.json where present); then kforge's own KernelBench
# files 100-103 (cats, channel shuffle, permutes into GEMMs, flatten and slices) imported and
# their start programs through every gate.
# One device call; from the repo root, with the carried binary (as bench/pool/run.sh).
#
# usage: OUT=DIR bash bench/copy/run.sh
# environment: KFORGE (.carry/bin/kforge), DEVICE (cuda; sim for a dry run).
# Results under $OUT/copy: specs/, programs/, eval/<name>.json (kforge eval --json),
#   table.md (name | status | median us | GB/s | % of copy bandwidth), status.txt (100-103),
#   steps.txt.
set -uo pipefail
R=$PWD
KB=/nonexistent  # no KernelBench files: our own examples only
. "$R/bench/lib/kernelbench_bench.sh"
kb_bench_init copy 0
mkdir -p "$O/micro" "$O/programs" "$O/eval"

spec() {  # name dims inputs graph outputs policy
    printf '{"name": "%s", "dims": %s, "inputs": %s, "graph": %s, "outputs": %s, "precision": {"policy": "%s"}}\n' \
        "$1" "$2" "$3" "$4" "$5" "$6" > "$O/micro/$1.json"
}
# channel counts are literals: the correctness shapes shrink N, H and W only (a named C would
# shrink apart from the cat's output)
spec cat4_bf16 '{"N": 32, "H": 56, "W": 56}' \
    '{"a": {"shape": ["N",64,"H","W"], "dtype": "bf16"}, "b": {"shape": ["N",64,"H","W"], "dtype": "bf16"}, "c": {"shape": ["N",64,"H","W"], "dtype": "bf16"}, "d": {"shape": ["N",64,"H","W"], "dtype": "bf16"}}' \
    '[{"op": "cat", "inputs": ["a", "b", "c", "d"], "output": "y", "axis": 1}]' '["y"]' bf16
spec permute_nhwc_f32 '{"N": 32, "C": 256, "H": 56, "W": 56}' \
    '{"x": {"shape": ["N","C","H","W"], "dtype": "f32"}}' \
    '[{"op": "permute", "inputs": ["x"], "output": "y", "dims": [0, 2, 3, 1]}]' '["y"]' fp32_strict
spec shuffle_f32 '{"N": 32, "H": 28, "W": 28}' \
    '{"x": {"shape": ["N",240,"H","W"], "dtype": "f32"}}' \
    '[{"op": "reshape", "inputs": ["x"], "output": "v", "shape": ["N", 3, 80, "H", "W"]}, {"op": "permute", "inputs": ["v"], "output": "t", "dims": [0, 2, 1, 3, 4]}, {"op": "reshape", "inputs": ["t"], "output": "y", "shape": ["N", 240, "H", "W"]}]' \
    '["y"]' fp32_strict
spec slice2_bf16 '{"N": 64, "H": 28, "W": 28}' \
    '{"x": {"shape": ["N",512,"H","W"], "dtype": "bf16"}}' \
    '[{"op": "slice", "inputs": ["x"], "output": "y", "axis": 1, "start": 1, "step": 2}]' '["y"]' bf16
spec flatten_f32 '{"N": 256, "C": 512, "H": 7, "W": 7}' \
    '{"x": {"shape": ["N","C","H","W"], "dtype": "f32"}}' \
    '[{"op": "reshape", "inputs": ["x"], "output": "y", "shape": ["N", "C*H*W"]}]' '["y"]' fp32_strict

CAL=$(cal_file)  # empty off the H200/H100 with a committed file: copy_bw 0, the column blank
copy_bw=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d.get('dram_bytes_per_s') or d.get('copy_bytes_per_s') or 0)" "$CAL" 2>/dev/null || echo 0)
echo "| problem | status | median us | GB/s | % of copy bandwidth ($copy_bw B/s) |" > "$O/table.md"
echo "|---|---|---|---|---|" >> "$O/table.md"
for s in "$O"/micro/*.json; do
    n=$(basename "$s" .json)
    step "plan_$n" 300 "$K" optimize "$s" --device sim --rounds 0 --db "$O/plan.db" > "$O/eval/$n.plan.log" 2>&1
    kb_start_program "$O/plan.db" "$n" > "$O/programs/$n.kf"
    step "eval_$n" 600 "$K" eval "$s" --program "$O/programs/$n.kf" --tier full --device "$DEVICE" \
        --json > "$O/eval/$n.json" 2> "$O/eval/$n.log"
    python3 - "$O/eval/$n.json" "$n" "$copy_bw" >> "$O/table.md" <<'PY'
import json, sys
try:
    d = json.JSONDecoder().raw_decode(open(sys.argv[1]).read())[0]
except Exception as e:
    print(f"| {sys.argv[2]} | no result ({e}) | | | |"); sys.exit(0)
t = (d.get("timing") or {}).get("median_ns") or 0
b = d.get("bytes") or 0
bw = b / (t * 1e-9) if t else 0
peak = float(sys.argv[3])
pct = f"{100 * bw / peak:.0f}%" if peak and bw else "-"
print(f"| {sys.argv[2]} | {d.get('status')} | {t / 1e3:.1f} | {bw / 1e9:.0f} | {pct} |")
PY
done
cat "$O/table.md"

files=("$R"/examples/kernelbench/10[0-3]_*.py)
kb_import 900       # our own KernelBench-format files
kb_status 300 gates # their start programs through every gate on DEVICE
kb_summary gates
