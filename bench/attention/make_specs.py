#!/usr/bin/env python3
"""The attention bench's problems as kforge specs (one JSON each) plus cases.json, the list the
PyTorch timer reads:

    make_specs.py OUT_DIR

Each case is softmax(q k^T * scale [mask]) v over [B, H, S|L, E|F] written as the importer writes
F.scaled_dot_product_attention (matmul transpose_b, scale, [masked_fill -inf by a bool [S, S] |
add a float [S, S]], softmax, matmul); `policy` is the precision policy (bf16 / fp16 inputs run
on the tensor cores, f32 under fp32_strict on the CUDA cores); mask "causal" is masked_fill's
structured mask (triu 1, no mask tensor). `kforge_expect` says whether kforge's planner should
fuse it ("attention") or plan the unfused gemm / softmax / gemm kernels ("unfused": a head dim
past 256, such as KernelBench level 1, 97's f32 1024; refused where rank-4 batched matmul is)."""
import json
import math
import os
import sys

CASES = [
    # name, B, H, S, L, E, F, dtype, policy, mask
    ("bf16_b4h16_s2048_d64", 4, 16, 2048, 2048, 64, 64, "bf16", "bf16", ""),
    ("bf16_b4h16_s2048_d128", 4, 16, 2048, 2048, 128, 128, "bf16", "bf16", ""),
    ("fp16_b8h16_s1024_d64", 8, 16, 1024, 1024, 64, 64, "f16", "fp16", ""),
    ("bf16_b16h16_s512_d64", 16, 16, 512, 512, 64, 64, "bf16", "bf16", ""),
    ("bf16_boolmask_b4h16_s2048_d64", 4, 16, 2048, 2048, 64, 64, "bf16", "bf16", "bool"),
    ("bf16_addmask_b4h16_s1024_d64", 4, 16, 1024, 1024, 64, 64, "bf16", "bf16", "float"),
    ("f32_b2h8_s1024_d64", 2, 8, 1024, 1024, 64, 64, "f32", "fp32_strict", ""),
    # an f32 additive mask (CUTLASS's memory-efficient attention adds it as its attn_bias)
    ("f32_addmask_b4h16_s1024_d64", 4, 16, 1024, 1024, 64, 64, "f32", "fp32_strict", "float"),
    ("f32_kb97_b32h32_s512_d1024", 32, 32, 512, 512, 1024, 1024, "f32", "fp32_strict", ""),
    # causal: masked_fill's structured mask triu 1 (what the importer writes for MinGPT's tril
    # buffer and SDPA is_causal): no mask read, fully masked tiles skipped; bf16 d64 / d128 seed
    # CUTLASS's FMHA with its CausalFusion, f32 (KernelBench level 3, 43's shape) the WMMA kernel
    ("bf16_causal_b4h16_s2048_d64", 4, 16, 2048, 2048, 64, 64, "bf16", "bf16", "causal"),
    ("bf16_causal_b4h16_s2048_d128", 4, 16, 2048, 2048, 128, 128, "bf16", "bf16", "causal"),
    ("f32_causal_kb43_b128h8_s512_d96", 128, 8, 512, 512, 96, 96, "f32", "fp32_strict", "causal"),
    # a head dim past the fused kernels (F > 256): the unfused gemm / softmax / gemm path
    ("bf16_b4h8_s1024_d512", 4, 8, 1024, 1024, 512, 512, "bf16", "bf16", ""),
]


def spec(name, b, h, s, l, e, f, dtype, policy, mask):
    lk = "S" if mask else "L"
    inputs = {"q": {"shape": ["B", "H", "S", "E"], "dtype": dtype},
              "k": {"shape": ["B", "H", lk, "E"], "dtype": dtype},
              "v": {"shape": ["B", "H", lk, "F"], "dtype": dtype}}
    graph = [{"op": "matmul", "inputs": ["q", "k"], "transpose_b": True, "output": "s"},
             {"op": "scale", "inputs": ["s"], "value": 1.0 / math.sqrt(e), "output": "t"}]
    cur = "t"
    if mask == "causal":
        graph.append({"op": "masked_fill", "inputs": ["t"], "mask": "triu", "diagonal": 1,
                      "value": "-inf", "output": "u"})
        cur = "u"
    elif mask:
        inputs["m"] = {"shape": ["S", "S"], "dtype": "bool" if mask == "bool" else dtype}
        graph.append({"op": "masked_fill", "inputs": ["t", "m"], "value": "-inf", "output": "u"}
                     if mask == "bool" else {"op": "add", "inputs": ["t", "m"], "output": "u"})
        cur = "u"
    graph += [{"op": "softmax", "inputs": [cur], "axis": -1, "output": "p"},
              {"op": "matmul", "inputs": ["p", "v"], "output": "o"}]
    dims = {"B": b, "H": h, "S": s, "E": e, "F": f}
    if not mask:
        dims["L"] = l
    return {"name": "attn_" + name, "dims": dims, "inputs": inputs, "graph": graph,
            "outputs": ["o"], "precision": {"policy": policy}}


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    os.makedirs(argv[1], exist_ok=True)
    cases = []
    for c in CASES:
        name, b, h, s, l, e, f, dtype, policy, mask = c
        with open(os.path.join(argv[1], f"attn_{name}.json"), "w") as out:
            json.dump(spec(*c), out, indent=1)
        cases.append({"name": "attn_" + name, "B": b, "H": h, "S": s, "L": l, "E": e, "F": f,
                      "dtype": dtype, "policy": policy, "mask": mask,
                      "kforge_expect": "unfused" if e > 256 else "attention"})
    with open(os.path.join(argv[1], "cases.json"), "w") as out:
        json.dump(cases, out, indent=1)


if __name__ == "__main__":
    main(sys.argv)
