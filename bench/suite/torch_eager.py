#!/usr/bin/env python3
"""PyTorch eager baseline for kforge problem specs (problems/*.json), timed with the protocol of
kforge's evaluator: CUDA events around each iteration, L2 flushed (a 2x L2 buffer written)
before each, warm-up apart, median of N. TF32 is off for fp32 problems (strict reference);
allowed under the tf32 policy. Prints one JSON object per problem.

usage: python3 bench/suite/torch_eager.py problems/*.json [--iters 50]
(`kforge baseline` is the full version: torch.compile modes, IQR and CI, clocks, the store.)
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from kforge_py.spec_torch import DTYPES as DT, make_forward  # noqa: E402  (spec -> torch, shared)


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

        forward = make_forward(spec)
        inputs = [env[n] for n in spec["inputs"]]

        def fwd():
            return forward(*inputs)

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
