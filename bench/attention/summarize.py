#!/usr/bin/env python3
"""The attention bench's table: per case kforge's fused kernel (its gates and full-tier median,
from `kforge eval --json`) against the fastest PyTorch SDPA backend that supports the case,
with the prediction written before the run:

    summarize.py RESULTS_DIR > summary.md"""
import json
import os
import sys

# Predicted ratio kforge / best PyTorch backend (time), written before the first GPU run: a WMMA
# kernel that keeps its output accumulator in shared memory and loads tiles with plain loads
# reaches about a third of FlashAttention-2's tensor-core rate; f32 on the CUDA cores about half
# of the efficient backend's (3xTF32 tensor cores there).
PREDICTED = {"bf16": "2.5-4x slower (25-40% of flash)", "f16": "2.5-4x slower (25-40% of flash)",
             "f32": "1.5-3x slower (CUDA cores vs efficient's tensor cores)"}


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
        plan = "attention" if os.path.exists(plan_path) and "attention(" in open(plan_path).read() \
            else ("refused" if not os.path.exists(plan_path) or not os.path.getsize(plan_path)
                  else "unfused")
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
