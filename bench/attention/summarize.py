#!/usr/bin/env python3
"""The attention bench's table: per case kforge's fused kernel (its gates and full-tier median,
from `kforge eval --json`) against the fastest PyTorch SDPA backend that supports the case,
with the prediction written before the run:

    summarize.py RESULTS_DIR > summary.md"""
import json
import os
import sys

# Predicted time ratio kforge / the best PyTorch backend, written before the first GPU run: WMMA
# products with the scores and probabilities through shared memory and a scalar per-row softmax
# reach about a third of FlashAttention-2's rate (flash ~300 TFLOP/s at d64 on an H100, kforge
# ~80-120); masked cases against efficient (explicit masks: no flash); f32 as 3xTF32 WMMA against
# efficient's f32 and math's cuBLAS f32 (TF32 off), about even.
PREDICTED = {"bf16": "2.5-4x (25-40% of the best)", "f16": "2.5-4x (25-40% of the best)",
             "f32": "0.7-1.5x"}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    d = argv[1]
    cases = load(os.path.join(d, "specs", "cases.json")) or []
    torch_r = load(os.path.join(d, "torch.json")) or {}
    print(f"# attention bench on {torch_r.get('device', '?')} (torch {torch_r.get('torch', '?')})\n")
    print("| case | kforge plan | kforge gates | kforge us | best PyTorch backend | its us | "
          "kforge / best | all backends (us) | predicted |")
    print("|---|---|---|---|---|---|---|---|---|")
    for c in cases:
        n = c["name"]
        plan_path = os.path.join(d, "programs", n + ".kf")
        if not os.path.exists(os.path.join(d, "programs", n + ".plan.log")):
            plan = "not run (CASES)"
        elif not os.path.exists(plan_path) or not os.path.getsize(plan_path):
            plan = "refused"
        else:
            plan = "attention" if "attention(" in open(plan_path).read() else "unfused"
        ev = load(os.path.join(d, "eval", n + ".json"))
        gates = ev.get("status", "?") + (" (SIMULATED)" if ev.get("simulated") else "") \
            if ev else "-"
        us = ev.get("timing", {}).get("median_ns", 0) / 1e3 if ev and ev.get("timing") else None
        t = torch_r.get(n, {})
        best = t.get("best")
        backends = ", ".join(f"{k} {v['ms'] * 1e3:.0f}" if "ms" in v else f"{k} -"
                             for k, v in t.items() if k != "best" and isinstance(v, dict))
        ratio = f"{us / (best['ms'] * 1e3):.2f}x" if us and best else "-"
        print(f"| {n} | {plan} | {gates} | {us:.0f} |" if us else f"| {n} | {plan} | {gates} | - |",
              end="")
        print(f" {best['backend'] if best else '-'} | {best['ms'] * 1e3:.0f} |" if best else " - | - |",
              end="")
        print(f" {ratio} | {backends} | {PREDICTED.get(c['dtype'], '-')} |")


if __name__ == "__main__":
    main(sys.argv)
