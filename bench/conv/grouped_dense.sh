#!/usr/bin/env bash
# Grouped convolutions whose filters per group CUTLASS's group fprop cannot tile (ShuffleNet's 3
# groups of 20, 40 or 160 filters: tile N 64 neither divides them nor is a multiple of them) run
# as one dense fprop on a block-diagonal filter (codegen/lower_conv.h group_fprop_tiles; the
# weight staged zero across groups by kernels/conv_layout.cuh's block-diagonal gather, issue 26).
# Each case's start program (the planner's) goes through every gate on the GPU against the fp64
# reference (`kforge eval --tier full`), one nvcc compile of a CUTLASS fprop each (about a
# minute). One device call; from the repo root, with the carried binary:
#   bash bench/lib/make_carry.sh build/release          (here: .carry with kforge)
#   OUT=DIR bash bench/conv/grouped_dense.sh            (on the GPU machine)
# environment: KFORGE (.carry/bin/kforge), DEVICE (cuda; sim for a dry run), CASES (a grep -E
#   pattern over the case names, default all).
# Results under $OUT/grouped_dense: specs/, programs/, eval/<case>.json and .log, summary.txt
# (one line per case: the plan's conv knobs and the gates' status). Exit 0 when the table was
# written, 3 without the binary.
set -uo pipefail
R=$PWD
K=${KFORGE:-$R/.carry/bin/kforge}
DEVICE=${DEVICE:-cuda}
O=${OUT:-/tmp/kforge-out}/grouped_dense
[ -x "$K" ] || { echo "no kforge binary at $K: run bench/lib/make_carry.sh first" >&2; exit 3; }
. "$R/bench/lib/kernelbench_bench.sh"
mkdir -p "$O/specs" "$O/programs" "$O/eval"
: > "$O/summary.txt"
# name C K groups kernel stride padding H W: x [N, C, H, W], w [K, C/groups, r, r]
CASE_LIST="g3x40_1x1 240 120 3 1 1 0 28 28
g3x20_1x1 24 60 3 1 1 0 56 56
g3x160_1x1 120 480 3 1 1 0 14 14
g3x40_3x3s2 120 120 3 3 2 1 28 28"
while read -r name c k groups r stride pad h w; do
    echo "$name" | grep -qE "${CASES:-.}" || continue
    spec="$O/specs/$name.json"
    cat > "$spec" <<EOF
{"name": "$name", "dims": {"N": 4, "C": $c, "K": $k, "H": $h, "W": $w},
 "inputs": {"x": {"shape": ["N", "C", "H", "W"], "dtype": "f32"},
            "w": {"shape": ["K", $((c / groups)), $r, $r], "dtype": "f32", "param": true},
            "b": {"shape": ["K"], "dtype": "f32", "param": true}},
 "graph": [{"op": "conv2d", "inputs": ["x", "w", "b"], "output": "c", "stride": [$stride, $stride],
            "padding": [$pad, $pad], "dilation": [1, 1], "groups": $groups},
           {"op": "relu", "inputs": ["c"], "output": "y"}],
 "outputs": ["y"], "precision": {"policy": "fp32_strict"}}
EOF
    "$K" optimize "$spec" --device sim --rounds 0 --db "$O/plan.db" > "$O/eval/$name.plan.log" 2>&1
    prog="$O/programs/$name.kf"
    kb_start_program "$O/plan.db" "$name" > "$prog"
    if [ ! -s "$prog" ]; then
        echo "$name: no start program ($(grep -o 'not expressible.*' "$O/eval/$name.plan.log" | head -1))" >> "$O/summary.txt"
        continue
    fi
    timeout 900 "$K" eval "$spec" --program "$prog" --tier full --device "$DEVICE" --json \
        > "$O/eval/$name.json" 2> "$O/eval/$name.log"
    rc=$?
    echo "$name: $(grep -o 'conv2d([^)]*)[^{]*' "$prog" | head -1 | cut -c1-150) | eval rc=$rc" \
         "$(grep -o '"status": *"[a-z_]*"' "$O/eval/$name.json" | head -1)" >> "$O/summary.txt"
done <<< "$CASE_LIST"
cat "$O/summary.txt"
