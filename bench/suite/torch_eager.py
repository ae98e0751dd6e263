#!/usr/bin/env python3
"""PyTorch eager baseline for kforge problem specs (problems/*.json), timed with the protocol of
kforge's evaluator: CUDA events around each iteration, L2 flushed (a 2x L2 buffer written)
before each, warm-up apart, median of N. TF32 is off for fp32 problems (strict reference);
allowed under the tf32 policy. Prints one JSON object per problem.

usage: python3 bench/suite/torch_eager.py problems/*.json [--iters 50]
"""
import json
import sys

import torch
import torch.nn.functional as F

DT = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64}


def run_op(op, env):
    k, a = op["op"], [env[n] for n in op["inputs"]]
    ax = op.get("axis", -1)
    if k == "matmul":
        x, y = a
        if op.get("transpose_a"): x = x.transpose(-1, -2)
        if op.get("transpose_b"): y = y.transpose(-1, -2)
        return x @ y
    if k == "linear": return F.linear(a[0], a[1], a[2] if len(a) > 2 else None)
    if k in ("add", "sub", "mul", "div"): return getattr(torch, k)(a[0], a[1])
    v = op.get("value", 0.0)
    simple = {"relu": torch.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh, "silu": F.silu,
              "mish": F.mish, "exp": torch.exp, "log": torch.log, "neg": torch.neg, "abs": torch.abs,
              "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "square": torch.square}
    if k in simple: return simple[k](a[0])
    if k == "scale": return a[0] * v
    if k == "add_scalar": return a[0] + v
    if k == "min_scalar": return torch.clamp(a[0], max=v)
    if k == "max_scalar": return torch.clamp(a[0], min=v)
    if k == "leaky_relu": return F.leaky_relu(a[0], op.get("negative_slope", 0.01))
    if k == "gelu": return F.gelu(a[0], approximate=op.get("approximate", "none"))
    if k == "hardtanh": return F.hardtanh(a[0], op.get("min", -1.0), op.get("max", 1.0))
    if k == "clamp": return torch.clamp(a[0], op.get("min"), op.get("max"))
    if k == "softplus": return F.softplus(a[0], op.get("beta", 1.0), op.get("threshold", 20.0))
    if k == "dropout": return a[0]
    kd = op.get("keepdim", False)
    if k == "sum": return a[0].sum(ax, keepdim=kd)
    if k == "mean": return a[0].mean(ax, keepdim=kd)
    if k == "max": return a[0].amax(ax, keepdim=kd)
    if k == "min": return a[0].amin(ax, keepdim=kd)
    if k == "softmax": return torch.softmax(a[0], ax)
    if k == "log_softmax": return torch.log_softmax(a[0], ax)
    if k == "logsumexp": return torch.logsumexp(a[0], ax, keepdim=kd)
    eps = op.get("eps", 1e-5)
    if k == "layer_norm":
        ns = op.get("normalized_shape")
        n = len(ns) if ns else 1
        return F.layer_norm(a[0], a[0].shape[-n:], a[1] if len(a) > 1 else None,
                            a[2] if len(a) > 2 else None, eps)
    if k == "rms_norm":
        ns = op.get("normalized_shape")
        n = len(ns) if ns else 1
        return F.rms_norm(a[0], a[0].shape[-n:], a[1] if len(a) > 1 else None, eps)
    if k == "group_norm":
        return F.group_norm(a[0], op["num_groups"], a[1] if len(a) > 1 else None,
                            a[2] if len(a) > 2 else None, eps)
    raise SystemExit(f"unsupported op {k}")


def main():
    args = [x for x in sys.argv[1:] if not x.startswith("--")]
    iters = int(sys.argv[sys.argv.index("--iters") + 1]) if "--iters" in sys.argv else 50
    args = [x for x in args if not x.isdigit()]
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    for path in args:
        spec = json.load(open(path))
        pol = spec["precision"]["policy"]
        torch.backends.cuda.matmul.allow_tf32 = pol == "tf32"
        torch.backends.cudnn.allow_tf32 = pol == "tf32"
        dims = spec["dims"]
        env = {}
        for name, t in spec["inputs"].items():
            shape = [dims[d] if isinstance(d, str) else d for d in t["shape"]]
            env[name] = torch.randn(shape, device="cuda", dtype=torch.float32).to(DT[t["dtype"]])

        def fwd():
            e = dict(env)
            for op in spec["graph"]:
                e[op["output"]] = run_op(op, e)
            return [e[o] for o in spec["outputs"]]

        for _ in range(5): fwd()
        torch.cuda.synchronize()
        times = []
        for _ in range(iters):
            flush.fill_(1)
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record(); fwd(); e.record()
            torch.cuda.synchronize()
            times.append(s.elapsed_time(e) * 1e3)
        times.sort()
        print(json.dumps({"problem": spec["name"], "eager_median_us": times[len(times) // 2],
                          "eager_p25_us": times[len(times) // 4],
                          "eager_p75_us": times[3 * len(times) // 4]}), flush=True)


if __name__ == "__main__":
    main()
