#!/usr/bin/env python3
"""Redoes the SASS count behind sol/op_cost.cpp: per element, how many MUFU (SFU) instructions
and how many other arithmetic instructions (FMA and ALU pipes, one issue slot each) kforge's
generated CUDA executes for each op.

Method (what op_cost.cpp's comment refers to):
  1. For each op, a kernel loads V f32 values per thread with one vector load (as kforge's map
     kernels do), applies the op's expression to each, and stores them with one vector store.
     The expressions are the ones codegen/chain.cpp and kernels/{chain_ops,softmax,norm}.cuh
     emit; the script checks that chain.cpp still spells each chain-op helper it uses.
  2. nvcc with kforge's own flags (compile/compile.cpp: -gencode arch=compute_90a,code=sm_90a
     -std=c++17 --expt-relaxed-constexpr -O3 -DNDEBUG, no fast-math), then cuobjdump -sass.
  3. The instructions on the common path are counted: a forward conditional branch whose
     skipped range holds a MUFU is the op's main work (a threshold shortcut such as softplus's)
     and is followed; any other forward conditional branch skips a special-value fix-up or
     the call of an out-of-line slow path (division or sqrt of denormals, infinities) and is
     taken. Predicated instructions count (they issue whatever the predicate).
  4. Per element = (count at V=4 - count at V=2) / 2: loads, stores, address arithmetic and
     constants shared by the elements cancel. V=2 - V=1 is printed as a check.
  Classes: MUFU.* -> sfu. Not counted: control (BRA, BSSY, BSYNC, EXIT, CALL, RET, NOP),
  memory and constant loads (LDG, STG, LDC, ...), S2R, and uniform-datapath U* instructions.
  Everything else (FFMA, FMUL, FADD, FSETP, FSEL, FMNMX, FCHK, IMAD, IADD3, LOP3, SHF, I2FP,
  MOV, ...) -> simt.

Usage: python3 sol/count_op_instructions.py [--arch sm_90a] [--nvcc PATH] [--cuobjdump PATH]
op_cost.cpp keeps one column per arch kforge compiles for (sm_80, sm_89, sm_90a, sm_100: run
once per --arch). cuobjdump comes with a full CUDA toolkit, or from PyPI: pip install
nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm (cuobjdump -sass runs nvdisasm: put its folder on
PATH).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (name, expression of x [and z, a second tensor operand], chain-op helper that chain.cpp must
# still emit, or None). Names match op_cost.cpp's table rows.
OPS = [
    ("add", "x + z", None),
    ("sub", "x - z", None),
    ("mul", "x * z", None),
    ("div", "x / z", None),
    ("scale_0.5", "x * 0.5f", None),
    ("add_scalar", "x + 1.5f", None),
    ("div_scalar_3", "x / 3.0f", None),
    ("relu", "kforge::act_relu(x)", "kforge::act_relu("),
    ("leaky_relu", "kforge::act_leaky_relu(x, 0.01f)", "kforge::act_leaky_relu("),
    ("clamp", "kforge::act_clamp(x, -1.0f, 1.0f)", "kforge::act_clamp("),
    ("min_scalar", "kforge::min_nan(x, 0.0f)", "kforge::min_nan("),
    ("max_scalar", "kforge::max_nan(x, 0.0f)", "kforge::max_nan("),
    ("maximum", "kforge::max_nan(x, z)", "kforge::max_nan("),
    ("minimum", "kforge::min_nan(x, z)", "kforge::min_nan("),
    ("neg", "-x", None),
    ("abs", "fabsf(x)", "fabsf("),
    ("square", "kforge::act_square(x)", "kforge::act_square("),
    ("exp", "expf(x)", "expf("),
    ("log", "logf(x)", "logf("),
    ("sqrt", "sqrtf(x)", "sqrtf("),
    ("rsqrt", "rsqrtf(x)", "rsqrtf("),
    ("erf", "erff(x)", "erff("),
    ("log1p", "log1pf(x)", "log1pf("),
    ("expm1", "expm1f(x)", "expm1f("),
    ("sin", "sinf(x)", "sinf("),
    ("cos", "cosf(x)", "cosf("),
    ("sign", "kforge::act_sign(x)", "kforge::act_sign("),
    ("reciprocal", "1.0f / x", None),
    ("tanh", "tanhf(x)", "tanhf("),
    ("sigmoid", "kforge::act_sigmoid(x)", "kforge::act_sigmoid("),
    ("silu", "kforge::act_silu(x)", "kforge::act_silu("),
    ("gelu_erf", "kforge::act_gelu_erf(x)", "kforge::act_gelu_erf("),
    ("gelu_tanh", "kforge::act_gelu_tanh(x)", "kforge::act_gelu_tanh("),
    ("mish", "kforge::act_mish(x)", "kforge::act_mish("),
    ("softplus_beta1", "kforge::act_softplus(x, 1.0f, 20.0f)", "kforge::act_softplus("),
    ("softplus_beta2", "kforge::act_softplus(x, 2.0f, 10.0f)", "kforge::act_softplus("),
    ("softplus_beta3", "kforge::act_softplus(x, 3.0f, 20.0f)", "kforge::act_softplus("),
    # row ops: the per-element exponential of kernels/softmax.cuh (m is the row max)
    ("softmax_exp", "__expf(x - m)", None),
    # and the per-row reciprocal square root of kernels/norm.cuh
    ("norm_rsqrt", "rsqrtf(x * 0.0009765625f + 1e-5f)", None),
]

NOT_COUNTED = re.compile(
    r"^(BRA|BSSY|BSYNC|EXIT|CALL|RET|NOP|BREAK|WARPSYNC|BAR|LDG|STG|LDS|STS|LDL|STL|LD|ST|"
    r"LDC|S2R|S2UR|CS2R)$")


def kernel_source(name, expr, v):
    vec = {1: "float", 2: "float2", 4: "float4"}[v]
    lanes = ["x"] if v == 1 else ["x", "y", "z", "w"][:v]
    lines = [f"extern \"C\" __global__ void k_{name.replace('.', '_')}_{v}(",
             f"    const {vec}* __restrict__ xs, const {vec}* __restrict__ zs,",
             f"    {vec}* __restrict__ ys, float m, int n) {{",
             "    int i = blockIdx.x * blockDim.x + threadIdx.x;",
             "    if (i >= n) return;",
             f"    {vec} a = xs[i]; {vec} b = zs[i]; {vec} r;"]
    for lane in lanes:
        acc = "a" if v == 1 else f"a.{lane}"
        opnd = "b" if v == 1 else f"b.{lane}"
        dst = "r" if v == 1 else f"r.{lane}"
        z = f" float z = {opnd};" if re.search(r"\bz\b", expr) else ""
        lines.append(f"    {{ float x = {acc};{z} {dst} = ({expr}); }}")
    lines.append("    ys[i] = r;")
    lines.append("}")
    return "\n".join(lines)


def parse_sass(text):
    """{function: [(addr, predicated, opcode, operands)]}"""
    funcs, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"\s*Function\s*:\s*(\S+)", line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s*(.*?);", line)
        if not m or cur is None:
            continue
        addr, body = int(m.group(1), 16), m.group(2).strip()
        pred = None
        pm = re.match(r"(@!?U?P[T0-9]+)\s+(.*)", body)
        if pm:
            pred, body = pm.group(1), pm.group(2)
        parts = body.split(None, 1)
        cur.append((addr, pred, parts[0], parts[1] if len(parts) > 1 else ""))
    return funcs


def base_opcode(op):
    return op.split(".")[0]


def branch_target(operands):
    m = re.search(r"(0x[0-9a-f]+)\s*$", operands)
    return int(m.group(1), 16) if m else None


def common_path_counts(instrs):
    by_addr = {a: k for k, (a, _, _, _) in enumerate(instrs)}
    counts = {"sfu": 0, "simt": 0}
    k, steps = 0, 0
    while k < len(instrs):
        steps += 1
        if steps > 100000:
            raise RuntimeError("no end of the common path (a loop?)")
        addr, pred, op, operands = instrs[k]
        base = base_opcode(op)
        if base == "BRA":
            target = branch_target(operands)
            if target is None or target == addr:
                break
            if pred is None:
                k = by_addr[target]
                continue
            if target < addr:
                raise RuntimeError(f"backward conditional branch at {addr:#x}")
            skipped = [i for i in instrs if addr < i[0] < target]
            if any(base_opcode(i[2]) == "MUFU" for i in skipped):
                k += 1  # the op's main work sits behind a shortcut: follow it
            else:
                k = by_addr[target]  # special values or an out-of-line slow path: skip
            continue
        if base == "EXIT" and pred is None:
            break
        if base in ("CALL", "RET"):
            raise RuntimeError(f"{op} on the common path at {addr:#x}")
        if base == "MUFU":
            counts["sfu"] += 1
        elif not NOT_COUNTED.match(base) and not base.startswith("U"):
            counts["simt"] += 1
        k += 1
    return counts


def find_tool(name, given):
    if given:
        return given
    path = shutil.which(name)
    if path:
        return path
    for root in [os.environ.get("CUDA_HOME", "/usr/local/cuda")] + sys.path:
        for cand in (os.path.join(root, "bin", name), os.path.join(root, "nvidia", "cu13", "bin", name)):
            if os.path.isfile(cand):
                return cand
    sys.exit(f"count_op_instructions: {name} not found; give --{name} PATH "
             f"(pip install nvidia-cuda-{name} provides it)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--nvcc", default=None)
    ap.add_argument("--cuobjdump", default=None)
    ap.add_argument("--show-sass", default=None, help="print the SASS of this op at V=1")
    args = ap.parse_args()
    nvcc, cuobjdump = find_tool("nvcc", args.nvcc), find_tool("cuobjdump", args.cuobjdump)

    chain_cpp = open(os.path.join(REPO, "codegen", "chain.cpp")).read()
    for name, _, helper in OPS:
        if helper and helper not in chain_cpp:
            sys.exit(f"count_op_instructions: codegen/chain.cpp no longer emits {helper} "
                     f"({name}): update OPS")

    src = ['#include "kernels/chain_ops.cuh"', '#include "kernels/common.cuh"']
    for name, expr, _ in OPS:
        for v in (1, 2, 4):
            src.append(kernel_source(name, expr, v))
    digits = args.arch[3:] if args.arch.startswith("sm_") else args.arch
    with tempfile.TemporaryDirectory() as tmp:
        cu, cubin = os.path.join(tmp, "ops.cu"), os.path.join(tmp, "ops.cubin")
        open(cu, "w").write("\n".join(src) + "\n")
        subprocess.run([nvcc, f"-gencode=arch=compute_{digits},code=sm_{digits}", "-std=c++17",
                        "--expt-relaxed-constexpr", "-O3", "-DNDEBUG", "-I" + REPO, "-cubin",
                        "-o", cubin, cu], check=True)
        sass = subprocess.run([cuobjdump, "-sass", cubin], check=True, capture_output=True,
                              text=True).stdout
    funcs = parse_sass(sass)
    if args.show_sass:
        for a, p, op, o in funcs[f"k_{args.show_sass.replace('.', '_')}_1"]:
            print(f"{a:04x} {p or '':5} {op} {o}")
        return
    print(f"# {args.arch}, per element: sfu = MUFU, simt = other arithmetic instructions")
    print(f"# {'op':16} {'sfu':>5} {'simt':>5}   check V2-V1: sfu simt")
    for name, _, _ in OPS:
        c = {v: common_path_counts(funcs[f"k_{name.replace('.', '_')}_{v}"]) for v in (1, 2, 4)}
        per = {u: (c[4][u] - c[2][u]) / 2 for u in ("sfu", "simt")}
        chk = {u: c[2][u] - c[1][u] for u in ("sfu", "simt")}
        flag = "" if chk == per else "   (V2-V1 differs)"
        print(f"  {name:16} {per['sfu']:5g} {per['simt']:5g}   {chk['sfu']:g} {chk['simt']:g}{flag}")


if __name__ == "__main__":
    main()
