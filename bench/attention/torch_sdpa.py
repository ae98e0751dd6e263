#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention backends on the bench's cases (make_specs.py's
cases.json), timed on the GPU at hand:

    torch_sdpa.py CASES_JSON > torch.json

Per case and backend (flash, efficient, cudnn, math: torch.nn.attention.sdpa_kernel), the median
of 30 runs (CUDA events around the call; 5 warm-ups; the L2 flushed by a 2x-L2 memset before
each run, outside the events), or `unsupported` with PyTorch's reason. The bool-mask case is a
causal mask (kforge's masked_fill(m, -inf) with m above the diagonal = SDPA's attn_mask = ~m);
it is timed as that explicit mask and, in a row of its own, as is_causal=True (what flash
supports). f32 runs with TF32 off (fp32_strict). Prints one JSON object: {case: {backend: {...}}}
with `best` the fastest supported backend (explicit-mask rows only: the same math)."""
import json
import math
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
            "cudnn": SDPBackend.CUDNN_ATTENTION, "math": SDPBackend.MATH}
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}


def time_ms(fn, flush):
    for _ in range(5):
        fn()
    times = []
    for _ in range(30):
        flush.zero_()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


def run_case(c, flush):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dt = DTYPES[c["dtype"]]
    g = torch.Generator(device="cuda").manual_seed(1)
    q = torch.randn(c["B"], c["H"], c["S"], c["E"], device="cuda", dtype=dt, generator=g)
    k = torch.randn(c["B"], c["H"], c["L"], c["E"], device="cuda", dtype=dt, generator=g)
    v = torch.randn(c["B"], c["H"], c["L"], c["F"], device="cuda", dtype=dt, generator=g)
    scale = 1.0 / math.sqrt(c["E"])
    variants = {"": dict()}
    if c["mask"] == "bool":
        keep = torch.ones(c["S"], c["L"], device="cuda", dtype=torch.bool).tril()
        variants = {"": dict(attn_mask=keep), " (is_causal)": dict(is_causal=True)}
    elif c["mask"] == "causal":  # kforge's structured triu 1 = SDPA's is_causal (top-left)
        variants = {"": dict(is_causal=True)}
    elif c["mask"] == "float":
        variants = {"": dict(attn_mask=torch.randn(c["S"], c["L"], device="cuda", dtype=dt,
                                                     generator=g))}
    flops = 2.0 * c["B"] * c["H"] * c["S"] * c["L"] * (c["E"] + c["F"])
    out = {}
    for suffix, kw in variants.items():
        for name, backend in BACKENDS.items():
            key = name + suffix
            try:
                with sdpa_kernel(backend):
                    fn = lambda: F.scaled_dot_product_attention(q, k, v, scale=scale, **kw)
                    fn()
                    torch.cuda.synchronize()
                    ms = time_ms(fn, flush)
                out[key] = {"ms": ms, "tflops": flops / ms / 1e9}
            except (RuntimeError, torch.cuda.OutOfMemoryError) as e:
                torch.cuda.empty_cache()
                out[key] = {"unsupported": str(e).strip().splitlines()[0][:200]}
    timed = {n: r for n, r in out.items() if "ms" in r and "(is_causal)" not in n}
    if timed:
        best = min(timed, key=lambda n: timed[n]["ms"])
        out["best"] = {"backend": best, "ms": timed[best]["ms"]}
    return out


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    with open(argv[1]) as f:
        cases = json.load(f)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2 // 4 + 1, device="cuda", dtype=torch.float32)
    result = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__}
    for c in cases:
        try:
            result[c["name"]] = run_case(c, flush)
        except Exception as e:  # a case that cannot even allocate is reported, not fatal
            result[c["name"]] = {"error": f"{type(e).__name__}: {str(e)[:200]}"}
        torch.cuda.empty_cache()
        print(f"{c['name']}: {result[c['name']].get('best', result[c['name']])}",
              file=sys.stderr, flush=True)
    json.dump(result, sys.stdout, indent=1)


if __name__ == "__main__":
    main(sys.argv)
