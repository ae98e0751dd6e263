#!/usr/bin/env python3
"""Plain-store twin of a fused GEMM problem (issue 4: "the fused kernel runs within 5% of the
same GEMM with a plain store").

    make_plain.py PROBLEM.json PROGRAM.kf OUTDIR [--kforge KFORGE] [--no-sim]

writes OUTDIR/<name>_plain.json and OUTDIR/<name>_plain.kf:
  problem: dims and inputs of the first gemm kernel's two operands (same shapes and dtypes),
           a graph of one `matmul` (transpose_a/transpose_b from the operand dims: X[M,K] @
           W[N,K] is transpose_b), output C with the operand dtype (the only dtype a matmul op
           can produce), the problem's precision object unchanged;
  program: the first gemm kernel with exactly its knobs (tile, cluster, stages, schedule, math,
           acc, raster, swizzle, splitk: the header text after the operands, copied) and the
           chain reduced to `cast <C's dtype>` (none for f32) and `store C[<dims of its store>]`.
For a program of several kernels (gemm + rowwise, or two gemms) only the first gemm kernel is
kept: the twin then measures that GEMM, not the whole fused program (a comment in the .kf and
the `kernels` line on stdout say so).

With --kforge, the twin is validated: `kforge fmt` of both programs must give the same
canonical knobs for that kernel, `kforge check` must accept the twin problem, and (unless
--no-sim) `kforge eval --device sim --tier quick` must pass it.
Prints `twin NAME_plain kernels=K/first_gemm=NAME fused_dtype=D plain_dtype=D`.
Exit 2 on bad input (no gemm kernel, an operand that is not a problem input, a dtype the
fused store has that the twin cannot have), 3 when validation fails.
"""
import argparse
import json
import os
import re
import subprocess
import sys

SPEC_DTYPE = {"f32": "f32", "f16": "f16", "bf16": "bf16"}   # spec dtype -> `cast` operand


def die(code, msg):
    print("make_plain: " + msg, file=sys.stderr)
    sys.exit(code)


def strip_comments(text):
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


KERNEL_RE = re.compile(
    r"kernel\s+(\w+)\s*=\s*(gemm|rowwise\s+\w+|map)\s*\(([^)]*)\)([^{]*)\{([^}]*)\}", re.S)
TENSOR_RE = re.compile(r"^\s*(\w+)\s*\[([^\]]*)\]\s*$")


def parse_tensor(text, where):
    m = TENSOR_RE.match(text)
    if not m:
        die(2, "%s: cannot read tensor %r" % (where, text.strip()))
    dims = [d.strip() for d in m.group(2).split(",") if d.strip()]
    return m.group(1), dims


def split_operands(text):
    # "X[M,K], W[N,K]": split on the comma outside brackets
    depth, parts, cur = 0, [], ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


def kernels_of(kf_text):
    return [dict(name=m.group(1), head=re.sub(r"\s+", " ", m.group(2)), operands=m.group(3),
                 knobs=" ".join(m.group(4).split()), chain=m.group(5))
            for m in KERNEL_RE.finditer(strip_comments(kf_text))]


def fused_store(chain, where):
    """(tensor, dims, cast dtype in effect at the kernel's first store: 'f32' when none)."""
    dtype = "f32"
    for stmt in (s.strip() for s in chain.split(";")):
        words = stmt.split()
        if not words:
            continue
        if words[0] == "cast" and len(words) == 2:
            dtype = words[1]
        elif words[0] == "store":
            name, dims = parse_tensor(stmt[len("store"):], where + " store")
            return name, dims, dtype
    die(2, "%s: the gemm kernel's chain has no store" % where)


def make(problem_path, program_path):
    try:
        spec = json.load(open(problem_path))
    except (OSError, ValueError) as e:
        die(2, "%s: %s" % (problem_path, e))
    try:
        kf = open(program_path).read()
    except OSError as e:
        die(2, "%s: %s" % (program_path, e))
    name = spec.get("name")
    if not name:
        die(2, "%s: no name" % problem_path)
    ks = kernels_of(kf)
    if not ks:
        die(2, "%s: no kernel found" % program_path)
    gemms = [k for k in ks if k["head"] == "gemm"]
    if not gemms:
        die(2, "%s: no gemm kernel (kernels: %s); a plain-store twin needs one" %
            (program_path, ", ".join("%s=%s" % (k["name"], k["head"]) for k in ks)))
    g = gemms[0]
    where = "%s: kernel %s" % (program_path, g["name"])
    ops = split_operands(g["operands"])
    if len(ops) != 2:
        die(2, "%s: expected 2 gemm operands, got %r" % (where, g["operands"]))
    (a, adims), (b, bdims) = (parse_tensor(o, where) for o in ops)
    inputs = spec.get("inputs", {})
    for t in (a, b):
        if t not in inputs:
            die(2, "%s: operand %s is not a problem input (an intermediate of the program); "
                "the twin cannot feed it" % (where, t))
    if len(adims) < 2 or len(bdims) < 2:
        die(2, "%s: gemm operands need rank >= 2" % where)
    out_t, out_dims, fused_dtype = fused_store(g["chain"], where)
    contracted = [d for d in adims[-2:] if d in bdims[-2:] and d not in out_dims[-2:]]
    if len(contracted) != 1:
        die(2, "%s: cannot find the one contracted dim of %s%s and %s%s" %
            (where, a, adims, b, bdims))
    kd = contracted[0]
    transpose_a = adims[-2] == kd          # A[K,M]
    transpose_b = bdims[-1] == kd          # B[N,K]
    da, db = inputs[a]["dtype"], inputs[b]["dtype"]
    if da != db:
        die(2, "%s: operands of different dtypes (%s, %s) are not handled" % (where, da, db))
    if da not in SPEC_DTYPE:
        die(2, "%s: operand dtype %s has no `cast`" % (where, da))
    plain_dtype = da                       # a matmul op's output dtype: its operands'
    if SPEC_DTYPE[plain_dtype] != fused_dtype:
        die(2, "%s: the fused store %s is %s but a matmul of %s operands gives %s; the twin "
            "cannot store the same dtype" % (where, out_t, fused_dtype, da, plain_dtype))
    out = "C"
    while out in inputs or out in (a, b):
        out += "_"
    used = []
    for t in (a, b):
        for d in inputs[t]["shape"]:
            if isinstance(d, str) and d not in used:
                used.append(d)
    pname = name + "_plain"
    op = {"op": "matmul", "inputs": [a, b], "output": out}
    if transpose_a:
        op["transpose_a"] = True
    if transpose_b:
        op["transpose_b"] = True
    twin = {
        "name": pname,
        "description": "plain-store twin of %s (bench/kernels/epilogue_cost/make_plain.py): "
                       "%s = %s%s @ %s%s, only the matmul of its first gemm kernel %s" %
                       (name, out, a, "^T" if transpose_a else "", b,
                        "^T" if transpose_b else "", g["name"]),
        "dims": {d: spec["dims"][d] for d in used},
        "inputs": {t: {k: v for k, v in inputs[t].items()} for t in (a, b)},
        "graph": [op],
        "outputs": [out],
        "precision": spec["precision"],
    }
    multi = len(ks) > 1
    lines = ["# plain-store twin of %s (%s), generated by bench/kernels/epilogue_cost/"
             "make_plain.py:" % (name, os.path.basename(program_path)),
             "# kernel %s with the same knobs, chain reduced to the cast and a store." % g["name"]]
    if multi:
        lines.append("# The fused program has %d kernels (%s); this twin measures the GEMM "
                     "part only (kernel %s)." % (len(ks), ", ".join(
                         "%s=%s" % (k["name"], k["head"]) for k in ks), g["name"]))
    chain = ([] if plain_dtype == "f32" else ["cast " + SPEC_DTYPE[plain_dtype]]) + \
        ["store %s[%s]" % (out, ",".join(out_dims))]
    lines += ['program %s for "%s"' % (pname, pname),
              "kernel %s = gemm(%s[%s], %s[%s]) %s" % (g["name"], a, ",".join(adims), b,
                                                     ",".join(bdims), g["knobs"]),
              "    { %s }" % "; ".join(chain), ""]
    return twin, "\n".join(lines), dict(name=pname, kernels=len(ks), gemm=g["name"],
                                        fused_dtype=fused_dtype, plain_dtype=plain_dtype)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def canonical_gemm_knobs(kforge, path, kernel):
    rc, out, err = run([kforge, "fmt", path])
    if rc != 0:
        die(3, "kforge fmt %s failed: %s" % (path, (err or out).strip()[-400:]))
    for line in out.splitlines():
        m = re.match(r"kernel\s+(\w+)\s*=\s*gemm\([^)]*\)\s*(.*)$", line)
        if m and m.group(1) == kernel:
            return m.group(2).strip()
    die(3, "kforge fmt %s: no gemm kernel %s in its output" % (path, kernel))


def validate(kforge, problem_path, program_path, json_path, kf_path, info, sim):
    fused = canonical_gemm_knobs(kforge, program_path, info["gemm"])
    plain = canonical_gemm_knobs(kforge, kf_path, info["gemm"])
    if fused != plain:
        die(3, "knobs differ after kforge fmt:\n  fused: %s\n  plain: %s" % (fused, plain))
    rc, out, err = run([kforge, "check", json_path])
    if rc != 0:
        die(3, "kforge check %s failed (rc %d): %s" % (json_path, rc, (err or out).strip()))
    if sim:
        rc, out, err = run([kforge, "eval", "--device", "sim", "--tier", "quick",
                            "--problem", json_path, "--program", kf_path, "--json"])
        try:
            status = json.loads(out).get("status")
            msg = json.loads(out).get("message", "")
        except ValueError:
            status, msg = None, (err or out).strip()[-400:]
        if rc != 0 or status != "passed":
            die(3, "kforge eval --device sim --tier quick of %s: rc %d, status %s: %s" %
                (kf_path, rc, status, msg))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("problem")
    ap.add_argument("program")
    ap.add_argument("outdir")
    ap.add_argument("--kforge", help="kforge binary: validate the twin with it")
    ap.add_argument("--no-sim", action="store_true", help="skip the simulated quick eval")
    args = ap.parse_args()
    twin, kf, info = make(args.problem, args.program)
    os.makedirs(args.outdir, exist_ok=True)
    json_path = os.path.join(args.outdir, info["name"] + ".json")
    kf_path = os.path.join(args.outdir, info["name"] + ".kf")
    with open(json_path, "w") as f:
        json.dump(twin, f, indent=2)
        f.write("\n")
    with open(kf_path, "w") as f:
        f.write(kf)
    if args.kforge:
        validate(args.kforge, args.problem, args.program, json_path, kf_path, info,
                 not args.no_sim)
    print("twin %s kernels=%d/first_gemm=%s fused_dtype=%s plain_dtype=%s%s" % (
        info["name"], info["kernels"], info["gemm"], info["fused_dtype"], info["plain_dtype"],
        " validated" if args.kforge else ""))


if __name__ == "__main__":
    main()
