"""PyTorch eager (cuDNN) on the GPU for the specs of bench/rnn/make_specs.py: the nn.LSTM /
nn.GRU module each spec describes (flattened weights, as a model holds them), fp32 with TF32 off
(the fp32_strict policy), timed as the median of CUDA-event timings after warm-up; beside it
kforge's full-tier median from `kforge eval --json` (eval/NAME.json) and the model's prediction
(eval_sim/NAME.json). Prints a Markdown table. usage: python3 eager.py SPEC_DIR EVAL_DIR"""
import glob
import json
import os
import sys

import torch


def module_of(spec):
    op = spec["graph"][0]
    d = spec["dims"]
    cls = torch.nn.LSTM if op["op"] == "lstm" else torch.nn.GRU
    hidden = d["H"]
    m = cls(d["I"], hidden, op["num_layers"],
            bias=op.get("bias", True), batch_first=op.get("batch_first", False),
            bidirectional=op.get("bidirectional", False))
    return m.cuda().eval(), op, hidden


def time_eager(spec, reps=50):
    m, op, hidden = module_of(spec)
    d = spec["dims"]
    dirs = 2 if op.get("bidirectional") else 1
    x = torch.randn((d["B"], d["T"], d["I"]) if op.get("batch_first") else (d["T"], d["B"], d["I"]),
                    device="cuda")
    h0 = torch.randn(op["num_layers"] * dirs, d["B"], hidden, device="cuda")
    state = (h0, torch.randn_like(h0)) if op["op"] == "lstm" else h0
    with torch.no_grad():
        for _ in range(5):
            m(x, state)
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            m(x, state)
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) * 1e3)
    times.sort()
    return times[len(times) // 2]


def median_us(path):
    try:
        r = json.load(open(path))
    except (OSError, ValueError):
        return None, "no report"
    ns = (r.get("stats") or {}).get("median_ns") or r.get("median_ns")
    return (ns / 1e3 if ns else None), r.get("status", "?")


def main():
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    spec_dir, eval_dir = sys.argv[1], sys.argv[2]
    print(f"GPU: {torch.cuda.get_device_name()}, cuDNN {torch.backends.cudnn.version()}")
    print("| problem | kforge status | kforge us | eager (cuDNN) us | speedup | model us |")
    print("|---|---|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(spec_dir, "*.json"))):
        spec = json.load(open(path))
        name = spec["name"]
        eager = time_eager(spec)
        k, status = median_us(os.path.join(eval_dir, "eval", name + ".json"))
        model, _ = median_us(os.path.join(eval_dir, "eval_sim", name + ".json"))
        speed = f"{eager / k:.2f}x" if k else "-"
        print(f"| {name} | {status} | {k or '-'} | {eager:.1f} | {speed} | {model or '-'} |",
              flush=True)


if __name__ == "__main__":
    main()
