#!/usr/bin/env bash
# Tests of run.sh and table.py without a GPU (every number here is SIMULATED or fake):
#  1. run.sh --dry prints the plan and runs nothing;
#  2. DEVICE=sim run.sh: row_sum_f32 timed in 2 interleaved rounds (kforge on the simulated
#     device, the Python side in its host-clock CPU test mode), then gemm_bf16_4096, which the
#     time guard must skip; checks steps.tsv, skipped.txt, compare.tgz and table.py on the tgz;
#  3. table.py on a synthetic run: real `kforge eval --device sim --tier full --repeat 1 --json`
#     outputs of one problem per class plus fake_baseline.py documents with set torch/kforge
#     ratios; every verdict, % of cuBLAS and % of copy bandwidth checked against hand computation.
# usage: K=build/x/cli/kforge [KFORGE_PYTHON=.venv/bin/python] bash bench/kernels/compare/selftest.sh
# (a few minutes on 2 cores: the simulated full tier of a 4096^3 GEMM takes ~40 s)
set -euo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd); cd "$R"
: "${K:?set K to a kforge binary}"
export KFORGE_PYTHON=${KFORGE_PYTHON:-$R/.venv/bin/python}
T=$(mktemp -d /tmp/kforge-compare-selftest.XXXXXX)
fail() { echo "FAIL: $*"; exit 1; }
C=bench/kernels/compare

echo "== 1. dry run"
OUT=$T/dry TOTAL_S=900 bash $C/run.sh --dry --rounds 2 --modes eager,compile_max_autotune \
    row_sum_f32 linear_bias_relu_bf16 > $T/dry.txt
grep -q "s r2 baseline \[linear_bias_relu_bf16\]" $T/dry.txt || fail "dry plan lacks round 2"
[ ! -e $T/dry/run/sol.json ] || fail "dry run ran sol"
OUT=$T/dry TOTAL_S=300 MAT_S=240 bash $C/run.sh --dry --rounds 2 --modes eager,compile_max_autotune \
    row_sum_f32 linear_bias_relu_bf16 > $T/dry2.txt
grep -q "SKIP round 1 of \[linear_bias_relu_bf16\]" $T/dry2.txt || fail "dry plan does not skip"
grep -q "s r2 baseline \[row_sum_f32\]" $T/dry2.txt || fail "dry plan lacks row_sum round 2"
bash $C/run.sh --rounds 0 row_sum_f32 2>/dev/null && fail "--rounds 0 accepted"
bash $C/run.sh no_such_problem 2>/dev/null && fail "unknown problem accepted"
bash $C/run.sh --modes eager,bogus row_sum_f32 2>/dev/null && fail "unknown mode accepted"

echo "== 1b. prep.sh (simulated device: nothing compiles, the control flow and exit code)"
K=$K PREP_OUT=$T/prep DEVICE=sim bash $C/prep.sh row_sum_f32 seq_max_f32 | grep -q "row_sum_f32 rc=0 " ||
    fail "prep.sh did not report row_sum_f32"
K=$K PREP_OUT=$T/prep DEVICE=sim bash $C/prep.sh row_sum_f32 no_such_problem > /dev/null &&
    fail "prep.sh exit 0 with a failed compile"

echo "== 2. DEVICE=sim run with the time guard"
OUT=$T/sim DEVICE=sim ITERS=50 TOTAL_S=${SIM_TOTAL_S:-110} bash $C/run.sh --no-prep --rounds 2 \
    --modes eager row_sum_f32 gemm_bf16_4096 > $T/sim.log 2>&1 || fail "run.sh exited $?"
cat $T/sim.log
[ "$(ls $T/sim)" = "$(printf 'compare.tgz\nskipped.txt\nsteps.tsv')" ] ||
    fail "\$OUT holds more than compare.tgz, skipped.txt, steps.tsv: $(ls $T/sim)"
mkdir $T/sim/x && tar xzf $T/sim/compare.tgz -C $T/sim/x
for f in meta.txt sol.json row_sum_f32/kforge-r1.json row_sum_f32/kforge-r2.json \
         baseline-row_sum_f32-r1.json baseline-row_sum_f32-r2.json steps.tsv; do
    [ -s $T/sim/x/$f ] || fail "compare.tgz lacks $f"
done
rm -r $T/sim/x
grep -q "SKIP round 1 of \[gemm_bf16_4096\]" $T/sim/skipped.txt || fail "gemm not skipped"
[ ! -e $T/sim/gemm_bf16_4096/kforge-r1.json ] || fail "skipped step ran"
awk -F'\t' 'NR > 1 && $2 == "kforge" && $4 == "row_sum_f32" && $5 == 0' $T/sim/steps.tsv |
    wc -l | grep -qx 2 || fail "steps.tsv lacks the two kforge rounds"
python3 $C/table.py $T/sim/compare.tgz > $T/sim-table.md
cat $T/sim-table.md
grep -q "^\*\*SIMULATED" $T/sim-table.md || fail "simulated banner missing"
grep -q "| row_sum_f32 (sim) | rowwise fp32_strict |" $T/sim-table.md || fail "row missing"
grep -q "gemm_bf16_4096" $T/sim-table.md || fail "skip not reported in the table notes"

echo "== 3. table.py on a synthetic run (sim kforge, fake baseline)"
F=$T/fake; mkdir -p $F; echo "device: sim" > $F/meta.txt
probs="gemm_bf16_4096 linear_bias_relu_bf16 gemm_f32_4096 row_sum_f32 mish_softplus_chain_f32"
"$K" sol --json --calibration bench/calibration/h200.json $(printf 'problems/%s.json ' $probs) > $F/sol.json
for p in $probs; do
    mkdir -p $F/$p
    for r in 1 2; do
        if [ -n "${FIXTURES:-}" ] && [ -s "$FIXTURES/$p/kforge-r$r.json" ]; then
            cp "$FIXTURES/$p/kforge-r$r.json" $F/$p/
        else
            "$K" eval --device sim --tier full --problem problems/$p.json --program problems/$p.kf \
                --repeat 1 --seed $r --json > $F/$p/kforge-r$r.json
        fi
    done
done
ratios="gemm_bf16_4096:eager=0.97 linear_bias_relu_bf16:eager=1.3
        linear_bias_relu_bf16:compile_default=1.2 linear_bias_relu_bf16:compile_max_autotune=0.9
        gemm_f32_4096:eager=2.5 row_sum_f32:eager=1.1 row_sum_f32:compile_default=0.95
        mish_softplus_chain_f32:eager=2.0 mish_softplus_chain_f32:compile_default=1.1"
for r in 1 2; do
    "$KFORGE_PYTHON" $C/selftest/fake_baseline.py $F $r $ratios > $F/baseline-fake-r$r.json
done
python3 $C/table.py $F > $T/fake-table.md
cat $T/fake-table.md
python3 - $F $T/fake-table.md <<'PY'
import json, statistics, sys
run, table = sys.argv[1], open(sys.argv[2]).read()
rows = {l.split("|")[1].strip().split(" ")[0]: [c.strip() for c in l.split("|")[1:-1]]
        for l in table.splitlines() if l.startswith("| ") and "(sim)" in l}
def k(p):
    return statistics.median(
        statistics.median(json.load(open(f"{run}/{p}/kforge-r{r}.json"))["timing"]["programs"][0]
                          ["repetition_medians_ns"]) for r in (1, 2))
want = {"gemm_bf16_4096": "met", "linear_bias_relu_bf16": "missed",
        "gemm_f32_4096": "met", "row_sum_f32": "missed (vs compile)",
        "mish_softplus_chain_f32": "met"}
for p, v in want.items():
    got = rows[p][14]
    assert got == v + " (simulated)", (p, got)
    assert abs(float(rows[p][2]) - k(p) / 1e3) < 0.06, (p, rows[p][2], k(p))
assert rows["gemm_bf16_4096"][9] == "97% cuBLAS", rows["gemm_bf16_4096"][9]
assert rows["gemm_f32_4096"][6] == "2.50x", rows["gemm_f32_4096"][6]
assert rows["linear_bias_relu_bf16"][8] == "0.90x", rows["linear_bias_relu_bf16"][8]
sol = {s["problem"]: s for s in json.load(open(f"{run}/sol.json"))}
bw = 100 * sol["row_sum_f32"]["bytes_fused"] / (k("row_sum_f32") * 1e-9) / 4231594827646.775
assert rows["row_sum_f32"][9] == f"{bw:.0f}% copy BW", (rows["row_sum_f32"][9], bw)
assert rows["row_sum_f32"][10] == "2/2/2/0", rows["row_sum_f32"][10]
# mish is compute-bound in kforge sol: no copy-bandwidth rule, its % of SOL, judged against compile
assert sol["mish_softplus_chain_f32"]["bound_kind"] == "compute"
pct = 100 * sol["mish_softplus_chain_f32"]["time_fused_s"] / (k("mish_softplus_chain_f32") * 1e-9)
assert rows["mish_softplus_chain_f32"][9] == f"{pct:.0f}% SOL (compute)", rows["mish_softplus_chain_f32"][9]
assert rows["mish_softplus_chain_f32"][13].startswith(">= 1.0x compile (compute-bound)"), rows["mish_softplus_chain_f32"][13]
assert rows["row_sum_f32"][12] == "1980 (1755-1980) MHz, capped 26%", rows["row_sum_f32"][12]
print("table checks: ok")
PY
echo "selftest: all passed (simulated/fake data only; $T)"
