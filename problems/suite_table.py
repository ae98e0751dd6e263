#!/usr/bin/env python3
"""Prints the Markdown table of the built-in problem suite (problems/README.md) from the specs.

Counting conventions (those of problem/work.h; a planning model, not kforge's SOL in sol/):
- FLOPs: matmul/linear 2*M*N*K per batch (+ M*N for a bias); element-wise ops per output
  element: 1 for simple arithmetic, 0 dropout, 4 exp/log/sqrt/rsqrt/tanh/sigmoid, 5 silu,
  6 softplus, 8 gelu, 10 mish; sum/mean/max/min 1 per input element; softmax, log_softmax,
  logsumexp 5; layer_norm, rms_norm, group_norm 8 per element.
- Bytes, fused: every graph input and output once (compulsory traffic).
- Bytes, eager: per op, its inputs read once plus its output written once (PyTorch eager,
  one kernel per op, GEMM operands streamed once).
- Time on an H100/H200-class GPU: GEMM FLOPs at 700 TFLOP/s (bf16, fp16), 350 (tf32), 50
  (fp32_strict); other FLOPs at 50 TFLOP/s; 3.5 TB/s. Per op max(compute, memory); the eager
  estimate sums the ops, the fused bound takes the whole graph at once.
Usage: python3 problems/suite_table.py [problems_dir]
"""
import glob
import json
import math
import os
import sys

DTYPE_BYTES = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i32": 4, "i64": 8}
GEMM_PEAK = {"bf16": 700e12, "fp16": 700e12, "tf32": 350e12, "fp32_strict": 50e12}
SIMT_PEAK = 50e12
BANDWIDTH = 3.5e12
ELEMENTWISE = {"add": 1, "sub": 1, "mul": 1, "div": 1, "scale": 1, "add_scalar": 1,
               "min_scalar": 1, "max_scalar": 1, "relu": 1, "leaky_relu": 1, "hardtanh": 1,
               "clamp": 1, "neg": 1, "abs": 1, "square": 1, "dropout": 0, "exp": 4, "log": 4,
               "sqrt": 4, "rsqrt": 4, "tanh": 4, "sigmoid": 4, "silu": 5, "softplus": 6,
               "gelu": 8, "mish": 10}
ROWWISE_FLOPS = {"softmax": 5, "log_softmax": 5, "rms_norm": 8, "layer_norm": 8,
                 "group_norm": 8}
REDUCE = {"sum", "mean", "max", "min", "logsumexp"}


def broadcast(a, b):
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    assert all(x == y or x == 1 or y == 1 for x, y in zip(a, b)), (a, b)
    return [max(x, y) for x, y in zip(a, b)]


def infer(op, shapes):
    """Returns (output shape, GEMM FLOPs, other FLOPs) of one op."""
    kind, ins = op["op"], [shapes[t] for t in op["inputs"]]
    numel = math.prod(ins[0])
    if kind == "matmul":
        a, b = list(ins[0]), list(ins[1])
        if op.get("transpose_a"):
            a[-2], a[-1] = a[-1], a[-2]
        if op.get("transpose_b"):
            b[-2], b[-1] = b[-1], b[-2]
        assert a[-1] == b[-2], (a, b)
        out = broadcast(a[:-2], b[:-2]) + [a[-2], b[-1]]
        return out, 2 * math.prod(out) * a[-1], 0
    if kind == "linear":
        x, w = ins[0], ins[1]
        assert x[-1] == w[1], (x, w)
        out = x[:-1] + [w[0]]
        return out, 2 * math.prod(out) * x[-1], math.prod(out) if len(ins) > 2 else 0
    if kind in ELEMENTWISE:
        out = ins[0] if len(ins) == 1 else broadcast(ins[0], ins[1])
        return out, 0, ELEMENTWISE[kind] * math.prod(out)
    if kind in REDUCE:
        axis = op.get("axis", -1) % len(ins[0])
        out = list(ins[0])
        if op.get("keepdim"):
            out[axis] = 1
        else:
            del out[axis]
        return out, 0, (5 if kind == "logsumexp" else 1) * numel
    if kind in ROWWISE_FLOPS:
        return ins[0], 0, ROWWISE_FLOPS[kind] * numel
    raise ValueError(f"unknown op {kind}")


def analyse(spec):
    dims = spec["dims"]
    shapes, dtypes = {}, {}
    for name, t in spec["inputs"].items():
        shapes[name] = [dims[d] if isinstance(d, str) else d for d in t["shape"]]
        dtypes[name] = t["dtype"]
    policy = spec["precision"]["policy"]
    nbytes = lambda t: math.prod(shapes[t]) * DTYPE_BYTES[dtypes[t]]
    flops_gemm = flops_other = bytes_eager = time_eager = 0
    for op in spec["graph"]:
        out, fg, fo = infer(op, shapes)
        shapes[op["output"]] = out
        widest = max((dtypes[t] for t in op["inputs"]), key=lambda d: DTYPE_BYTES[d])
        dtypes[op["output"]] = dtypes[op["inputs"][0]] if len(op["inputs"]) == 1 else widest
        b = sum(nbytes(t) for t in op["inputs"]) + nbytes(op["output"])
        flops_gemm, flops_other, bytes_eager = flops_gemm + fg, flops_other + fo, bytes_eager + b
        time_eager += max(fg / GEMM_PEAK[policy] + fo / SIMT_PEAK, b / BANDWIDTH)
    bytes_fused = sum(nbytes(t) for t in spec["inputs"]) + sum(nbytes(t) for t in spec["outputs"])
    time_fused = max(flops_gemm / GEMM_PEAK[policy] + flops_other / SIMT_PEAK,
                     bytes_fused / BANDWIDTH)
    return dict(flops=flops_gemm + flops_other, flops_gemm=flops_gemm, bytes_fused=bytes_fused,
                bytes_eager=bytes_eager, ms_eager=time_eager * 1e3, ms_fused=time_fused * 1e3,
                bound="compute" if flops_gemm / GEMM_PEAK[policy] + flops_other / SIMT_PEAK
                > bytes_fused / BANDWIDTH else "memory")


def family(spec):
    kinds = [op["op"] for op in spec["graph"]]
    has_gemm = any(k in ("matmul", "linear") for k in kinds)
    if has_gemm and any(k in REDUCE or k in ROWWISE_FLOPS for k in kinds):
        return "gemm + row reduction"
    if has_gemm:
        return "gemm" if len(kinds) == 1 and not (kinds[0] == "linear") else "gemm + epilogue"
    if any(k in ROWWISE_FLOPS for k in kinds):
        return "row-wise"
    if any(k in REDUCE for k in kinds):
        return "reduction"
    return "element-wise"


def shape_text(spec):
    return ", ".join(f"{k}={v}" for k, v in spec["dims"].items())


def human(x, unit):
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= scale:
            return f"{x / scale:.3g} {prefix}{unit}"
    return f"{x:.3g} {unit}"


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    print("| name | family | dims | dtype / policy | FLOPs | bytes fused | bytes eager "
          "| est. eager ms | fused bound ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        spec = json.load(open(path))
        a = analyse(spec)
        dts = "/".join(sorted({t["dtype"] for t in spec["inputs"].values()}))
        print(f"| `{spec['name']}` | {family(spec)} | {shape_text(spec)} | "
              f"{dts} / {spec['precision']['policy']} | {human(a['flops'], 'FLOP')} | "
              f"{human(a['bytes_fused'], 'B')} | {human(a['bytes_eager'], 'B')} | "
              f"{a['ms_eager']:.3g} | {a['ms_fused']:.3g} ({a['bound']}) |")


if __name__ == "__main__":
    main()
