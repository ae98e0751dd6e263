#!/usr/bin/env bash
# Issue 24 on the GPU: the KernelBench level-1 convolution files -> specs (per-file import
# status) -> `kforge suite --device cuda` under one budget -> PyTorch baselines (eager and
# torch.compile, stored into each problem's run; fp32 problems run with cuDNN TF32 off, the
# fp32_strict policy) -> PyTorch's defaults (cuDNN TF32 on) timed apart and labelled ->
# `kforge report`. One device call; from the repo root, with the carried binary.
#
# usage: OUT=DIR bash bench/conv/run.sh KERNELBENCH_CHECKOUT [GLOB]
#   KERNELBENCH_CHECKOUT: a ScalingIntelligence/KernelBench checkout (outside the repository);
#   GLOB: the files under level1/ (default '*conv*': standard, depthwise, pointwise, transposed)
# environment: KFORGE (.carry/bin/kforge), DEVICE (cuda; sim for a dry run), SUITE_S (300, the
#   suite's --budget-wall), MODES (eager,compile_default), KFORGE_PYTHON (python with torch),
#   FORMS (all; "new": instead of GLOB, level 1's depthwise, grouped and transposed files alone -
#   the forms on CUTLASS's group fprop, direct depthwise convolution and dgrad), LEVEL2 (0; 1
#   adds level 2's ConvTranspose problems: a transposed convolution and its epilogue chain; L2GLOB
#   narrows them, e.g. '[1-4]*ConvTranspose*', for batches that fit a device call),
#   EXAMPLES (1: the repository's own conv examples 40-46 join), GATES (0; 1: each start program
#   through every gate, `kforge eval --tier full`, on DEVICE, one after another - a minute of
#   nvcc each, so for a few files; the suite evaluates every start program anyway, compiling on
#   a pool). A GLOB matching nothing (e.g. none) with LEVEL2=1 runs the level-2 files alone.
# Results under $OUT/conv: import.log, status.txt (one line per file: imported or the reason,
#   then the planner's verdict: a start program or "refused: <form>", and with GATES the start
#   program's gates: eval/<file>.json), programs/, specs/, suite.log,
#   baseline.log (fp32_strict: cudnn.allow_tf32 False), baseline_tf32_default.json (PyTorch's
#   defaults, cuDNN TF32 on, labelled, not stored as the baseline), report/, steps.txt.
set -uo pipefail
R=$PWD
KB=${1:?usage: OUT=DIR bash bench/conv/run.sh KERNELBENCH_CHECKOUT [GLOB]}
GLOB=${2:-*conv*}
. "$R/bench/lib/kernelbench_bench.sh"
kb_bench_init conv 300
PY=${KFORGE_PYTHON:-$R/.venv/bin/python}
mkdir -p "$O/tf32_default"
if [ "${FORMS:-all}" = new ]; then  # depthwise, and transposed (grouped ones among them)
    kb_add_files level1 "*conv_depthwise* *conv_transposed*"  # the grouped ones are transposed
else
    files=("$KB"/level1/$GLOB.py)
fi
[ "${LEVEL2:-0}" = 1 ] && kb_add_files level2 "${L2GLOB:-*ConvTranspose*}"
[ "${EXAMPLES:-1}" = 1 ] && files+=("$R"/examples/kernelbench/4[0-6]_*.py)
[ ${#files[@]} -gt 0 ] || { echo "no files match under $KB (GLOB $GLOB, FORMS ${FORMS:-all})" >&2; exit 2; }
GATES_ARG=$([ "${GATES:-0}" = 1 ] && echo gates)

kb_import 1800  # 1. import (one Python process); a failed file keeps no spec
# 2. per file: import status, whether the planner synthesizes a start program (what CUTLASS's
#    kernels cannot run is refused by name here, not in the suite) and its gates on DEVICE
kb_status 120 $GATES_ARG
kb_suite        # 3. the suite over the specs (the refused forms are skipped by its start phase)
kb_baseline 1800  # 4. baselines under the problems' policy (fp32_strict: cudnn.allow_tf32 = False)
if [ "$DEVICE" = cuda ]; then
    # PyTorch's defaults (cuDNN TF32 on): the same specs under the tf32 policy, timed apart
    for s in "$O"/specs/*.json; do
        "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); d["precision"]["policy"]="tf32"; json.dump(d, open(sys.argv[2], "w"))' \
            "$s" "$O/tf32_default/$(basename "$s")"
    done
    step baseline_tf32_default 1800 "$K" baseline "$O"/tf32_default/*.json --db "$O/tf32_default.db" \
        --modes "$MODES" --json > "$O/baseline_tf32_default.json" 2> "$O/baseline_tf32_default.log"
fi
kb_report       # 5. the report over the suite's runs
kb_summary $GATES_ARG
