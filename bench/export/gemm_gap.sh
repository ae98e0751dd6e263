#!/usr/bin/env bash
# bench/export/gemm_gap.sh: which factor made the exported CUTLASS GEMMs 6-19% slower under the
# export harness than under kforge's evaluator on the H100 (issue 23; bench/NOTES.md, session
# 18 call 3), in one device call: about 1 minute from a warm compile cache (run.sh's exports on
# the same machine are reused), about 2 from a cold one (three CUTLASS compiles in parallel).
# For each problem of PROBLEMS (default: the three of that note) the same built kernel is timed
#   eval_uniform01, eval_normal   kforge eval --tier quick --repeat 1: the quick gates, then the
#       full tier's timing protocol (10 warm-ups, 100 iterations back to back, L2 flush) on a
#       spec copy whose every input is drawn uniform01 (kforge's timing inputs before the
#       spec's distributions) or normal (the default now: torch.randn, as the harness draws)
#   alone_*, harness_*   the exported op's CUDA-graph replay (gemm_gap.py time): alone in the
#       evaluator's protocol and interleaved in the harness's, on torch.rand and torch.randn
# while nvidia-smi samples the SM clock, max clock, power, temperature and throttle reasons
# every 20 ms. Writes $OUT/gemm_gap.md (the table and the three ratios), phases.jsonl, smi.csv
# and eval_<problem>_<distribution>.json.
#   here:        bash bench/export/make_carry.sh build/ci     (then carry .carry.tar.xz)
#   GPU machine: tar xJf .carry.tar.xz && OUT=$OUT bash bench/export/gemm_gap.sh
# KFORGE_TORCH_EXT=off by default: the ctypes path, no kforge_torch build (the graph replays
# time the kernels alone either way; the eager op's column then carries ctypes' host time).
set -uo pipefail
O=${OUT:-/tmp/kforge-out}; mkdir -p "$O"
. bench/export/carry_env.sh
export KFORGE_TORCH_EXT=${KFORGE_TORCH_EXT:-off}
W=/tmp/kforge-gemm-gap; mkdir -p "$W"; : > "$O/phases.jsonl"
PROBLEMS=${PROBLEMS:-"gemm_fp16_4096 gemm_nt_fp16 linear_bias_relu_bf16"}
T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
# the throttle reasons' field by its newer name, else its older one, else none (an unknown
# field fails the whole query)
Q=timestamp,clocks.sm,clocks.max.sm,power.draw,temperature.gpu
for f in clocks_event_reasons.active clocks_throttle_reasons.active; do
    nvidia-smi --query-gpu=$Q,$f --format=csv,noheader > /dev/null 2>&1 && { Q=$Q,$f; break; }
done
nvidia-smi --query-gpu=$Q --format=csv,noheader,nounits -lms 20 > "$O/smi.csv" 2> "$W/smi.err" &
SMI=$!
trap 'kill $SMI 2> /dev/null' EXIT

stamp "1. export (run.sh's export of the same problem on this machine is reused)"
pids=()
dirs=()
for n in $PROBLEMS; do
    d=/tmp/kforge-export/$n
    [ -e "$d/README.md" ] || d=$W/$n
    dirs+=("$d")
    [ -e "$d/README.md" ] && continue
    (rm -rf "$d"; timeout 240 "$K" export "$R/problems/$n.json" -o "$d" --runtime-lib "$RTLIB" \
        > "$W/$n.export.txt" 2>&1 || echo "$n: export failed: $(tail -3 "$W/$n.export.txt")") &
    pids+=($!)
done
[ ${#pids[@]} -gt 0 ] && wait "${pids[@]}"

stamp "2. kforge eval (quick gates, then the full tier's timing protocol), uniform01 then normal"
for d in "${dirs[@]}"; do
    n=$(basename "$d")
    [ -e "$d/README.md" ] || { echo "$n: not exported"; continue; }
    for dist in uniform01 normal; do
        python3 "$R/bench/export/gemm_gap.py" spec "$d/spec.json" "$dist" "$W/$n.$dist.json"
        t0=$(date +%s.%N)
        timeout 120 "$K" eval "$W/$n.$dist.json" --program "$d/program.kf" --tier quick \
            --repeat 1 --device cuda --json > "$O/eval_${n}_$dist.json" 2> "$W/eval_${n}_$dist.err"
        rc=$?
        echo "{\"problem\": \"$n\", \"phase\": \"eval_$dist\", \"t0\": $t0, \"t1\": $(date +%s.%N), \"rc\": $rc}" \
            >> "$O/phases.jsonl"
        echo "$n eval $dist rc=$rc $(tail -1 "$W/eval_${n}_$dist.err" | cut -c1-160)"
    done
done

stamp "3. the exported op: alone and in the harness's protocol, torch.rand and torch.randn"
exported=()
for d in "${dirs[@]}"; do [ -e "$d/README.md" ] && exported+=("$d"); done
[ ${#exported[@]} -gt 0 ] && timeout 150 python3 "$R/bench/export/gemm_gap.py" time \
    "$O/phases.jsonl" "${exported[@]}" 2> "$W/time.err" | cut -c1-200
grep -sv Warning "$W/time.err" | tail -5

stamp "4. table"
kill $SMI 2> /dev/null
sleep 0.2
python3 "$R/bench/export/gemm_gap.py" table "$O/phases.jsonl" "$O/smi.csv" "$O" > "$O/gemm_gap.md"
cat "$O/gemm_gap.md"
