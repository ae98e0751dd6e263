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
#   suite's --budget-wall), MODES (eager,compile_default), KFORGE_PYTHON (python with torch).
# Results under $OUT/conv: import.log, status.txt (one line per file: imported or the reason,
#   then the planner's verdict: a start program or "refused: <form>"), specs/, suite.log,
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
files=("$KB"/level1/$GLOB.py)
[ ${#files[@]} -gt 0 ] || { echo "no files match $KB/level1/$GLOB.py" >&2; exit 2; }

kb_import 1800  # 1. import (one Python process); a failed file keeps no spec
kb_status 120   # 2. per file: import status, and whether the planner synthesizes a start program
                #    (a form kforge does not lower yet is refused by name here, not in the suite)
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
kb_summary
