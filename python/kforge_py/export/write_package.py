"""`kforge export`'s Python side: python -m kforge_py.export.write_package OUT --package PKG
[--kernelbench FILE]. The C++ side has written OUT/spec.json, OUT/evidence.json and
OUT/PKG/program/ (runtime.json, plan, source, cubin); this writes

  OUT/PKG/__init__.py     registers torch.ops.kforge.<name> (torch.library.custom_op with a fake
                          implementation) over OUT/PKG/_kforge_op.py (a copy of op_runtime.py)
  OUT/model_new.py        with --kernelbench: class ModelNew (model_new.py in this folder), and
                          OUT/constants.pt where forward() makes constants the op takes
  OUT/pyproject.toml      so `pip install --no-build-isolation OUT` installs PKG with its program
  OUT/README.md

Exit 0, or 2 (user error: a KernelBench file that does not match the exported spec)."""
import argparse
import json
import keyword
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def arg_name(tensor_name, taken):
    name = re.sub(r"\W", "_", tensor_name)
    if not name or name[0].isdigit() or keyword.iskeyword(name) or name in ("self", "out"):
        name = "t_" + name
    while name in taken:
        name += "_"
    taken.add(name)
    return name


# PyTorch's limit on a schema's arguments: an op of more inputs (a network's weights) takes them
# as one list, `Tensor[] inputs` (packed; kforge_torch reads the list the same way).
MAX_SCHEMA_ARGS = 64


def packed(num_inputs):
    return num_inputs > MAX_SCHEMA_ARGS


def schema_of(args, outputs):
    """The op's schema, stated once: the compiled and the ctypes paths both register it."""
    ret = "Tensor" if len(outputs) == 1 else "(" + ", ".join(["Tensor"] * len(outputs)) + ")"
    if packed(len(args)):
        return "(Tensor[] inputs) -> " + ret
    return "(" + ", ".join(f"Tensor {a}" for a in args) + ") -> " + ret


def package_init(op, manifest, description):
    inputs = [t for t in manifest["tensors"] if t["role"] == "input"]
    outputs = [t for t in manifest["tensors"] if t["role"] == "output"]
    taken = set()
    args = [arg_name(t["name"], taken) for t in inputs]
    call = "(" + ", ".join(args) + ("," if len(args) == 1 else "") + ")"
    schema = schema_of(args, outputs)
    params = ", ".join(args)
    if packed(len(inputs)):  # one list argument, in the order of INPUTS
        params, call = "inputs", "inputs"
    ret = "outs[0]" if len(outputs) == 1 else "tuple(outs)"
    sig_in = ", ".join(f"{t['name']}: {t['dtype']}{t['shape']}" for t in inputs)
    sig_out = ", ".join(f"{t['name']}: {t['dtype']}{t['shape']}" for t in outputs)
    return f'''"""kforge::{op}, exported by `kforge export` (do not edit: export again instead).

{description}

torch.ops.kforge.{op}({"[" + sig_in + "]" if packed(len(inputs)) else sig_in}) -> ({sig_out})
Inputs must be contiguous CUDA tensors of exactly these dtypes and shapes on a
{manifest["arch"]} GPU; a call that does not match raises ValueError naming the mismatch.

The CUDA kernel is the compiled kforge_torch (C++: the checks, the outputs, one launch, no
Python) where it loads or builds against this torch (_kforge_native.py), else the ctypes path
(_body; said once). The fake implementation (torch.compile, meta tensors) is Python either way.
"""
import os

import torch

from . import _kforge_native, _kforge_op

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = _kforge_op.Program(HERE, "{op}")
INPUTS = {[t["name"] for t in inputs]!r}
OUTPUTS = {[t["name"] for t in outputs]!r}
SCHEMA = "{schema}"
PACKED = {packed(len(inputs))}  # the inputs as one list (more than {MAX_SCHEMA_ARGS}: a schema's limit)


def _body({params}):
    """The ctypes CUDA implementation (checks, outputs from the caching allocator, one launch)."""
    outs = PROGRAM.run({call})
    return {ret}


def _fake({params}):
    device = PROGRAM.check({call}, fake=True)
    outs = PROGRAM.empty_outputs(device)
    return {ret}


NATIVE = _kforge_native.extension(HERE)  # kforge_torch, or None (the reason said once)
if NATIVE is not None:
    _LIB = torch.library.Library("kforge", "FRAGMENT")
    _LIB.define("{op}" + SCHEMA)
    torch.library.register_fake("kforge::{op}", _fake, lib=_LIB)
    NATIVE.register_op("{op}", *PROGRAM.native_decls(), PROGRAM.native_entry)
else:
    torch.library.custom_op("kforge::{op}", _body, mutates_args=(),
                            schema=SCHEMA).register_fake(_fake)

op = torch.ops.kforge.{op}
'''


def pyproject(package, op):
    return f'''[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "{package.replace("_", "-")}"
version = "0.1.0"
description = "kforge::{op}, a kforge-optimized kernel as a PyTorch custom op"
requires-python = ">=3.9"
dependencies = ["torch>=2.4"]

[tool.setuptools]
packages = ["{package}"]

[tool.setuptools.package-data]
"{package}" = ["program/*", "csrc/*"]
'''


def fmt_us(ns):
    return "-" if ns is None else f"{ns / 1e3:.3f} us"


def readme(out, package, op, spec, manifest, evidence, model_new):
    inputs = [t for t in manifest["tensors"] if t["role"] == "input"]
    outputs = [t for t in manifest["tensors"] if t["role"] == "output"]
    lines = [f"# kforge::{op}", "", spec.get("description", "") or spec["name"], ""]
    lines += ["## What is here", "",
              f"- `{package}/`: the Python package; importing it registers the PyTorch custom op "
              f"`torch.ops.kforge.{op}` (eager, `torch.compile(fullgraph=True)`, CUDA graphs, "
              "`torch.library.opcheck`).",
              f"- `{package}/program/`: what runs: `runtime.json` (tensors, dims, arch), "
              "`plan.json` (launch plan), `kernels.cu` (the generated CUDA), "
              + ("`kernels.cubin` and its host library, built for " + manifest["arch"]
                 if manifest["built"] else "**no cubin: exported with `--no-build`** (the op "
                 "checks calls but refuses to launch)")
              + ", and `libkforge_runtime.so` (kforge's C runtime).",
              "- `spec.json` (the problem), `program.kf` (the kforge program), `evidence.json` "
              "(where it came from and how it measured)."]
    mode = evidence.get("launch_mode", "stream")
    lines += [f"- Launched {'as one CUDA graph' if mode == 'graph' else 'kernel by kernel on the stream'} "
              f"(plan.json `launch_mode`: {mode}; "
              + (evidence["launch_mode_reason"] if evidence.get("launch_mode_reason")
                 else "as the evaluation's timing chose") + ")."]
    if model_new:
        lines += ["- `model_new.py`: `class ModelNew`, a drop-in for the KernelBench `Model` "
                  "(same constructor, parameters and buffers; `forward` calls the custom op), "
                  "with `get_inputs` / `get_init_inputs` of the original file "
                  "(`original_model.py`). Arguments Model draws itself when they are not "
                  "given (an LSTM's h0/c0) ModelNew draws with the same RNG calls in the same "
                  "order (`draw_missing(*args)` does only that); constants folded from buffers "
                  "are computed from ModelNew's own buffers, constants Model's forward makes "
                  "are in `constants.pt`."]
    lines += ["", "## Set up", "",
              "```sh",
              f"pip install --no-build-isolation {os.path.abspath(out)}   # or: "
              f"export PYTHONPATH={os.path.abspath(out)}:$PYTHONPATH",
              "```", "",
              "The op's CUDA kernel is kforge's compiled PyTorch extension `kforge_torch` "
              f"(`{package}/csrc/kforge_torch.cpp`), built against the torch you have: "
              "kforge's own CMake build of it for the same torch version where "
              "`kforge_torch/libkforge_torch.so` is in a `sys.path` folder (or "
              "`$KFORGE_TORCH_LIB` names it), else the first import compiles it with "
              "`torch.utils.cpp_extension` (about half a minute, needs a C++ compiler and "
              "ninja; cached in "
              "`~/.cache/kforge/torch_ext`, or `$KFORGE_TORCH_EXT_CACHE`). Where it cannot, a "
              "warning says why once and the op calls the same cubin through "
              "`libkforge_runtime.so` with ctypes (about 20 us more host time per call). "
              "`KFORGE_TORCH_EXT=off|prebuilt|build` chooses. Either way the op launches on "
              "PyTorch's current stream, takes its outputs and workspace from PyTorch's caching "
              "allocator, and never synchronizes.", "",
              "## Use", "", "```python", "import torch", f"import {package}", "",
              f"out = torch.ops.kforge.{op}(" + ("[" if packed(len(inputs)) else "")
              + ", ".join(t["name"] for t in inputs) + ("])" if packed(len(inputs)) else ")"),
              "```", "",
              "| tensor | role | dtype | shape |", "|---|---|---|---|"]
    for t in inputs + outputs:
        lines.append(f"| `{t['name']}` | {t['role']} | {t['dtype']} | {t['shape']} |")
    dims = ", ".join(f"{k}={v}" for k, v in manifest["dims"])
    lines += ["", f"**Shapes are fixed**: the program was exported for one binding of its dims "
              f"({dims}); the kernels' launch grids are computed for them, so every call must "
              "have exactly these shapes. Inputs must be contiguous CUDA tensors on a GPU of arch "
              f"{manifest['arch']}. A call that does not match raises `ValueError` naming the "
              "tensor and the mismatch; a GPU of another arch, a package without its cubin or "
              "a failing launch raises `RuntimeError`. There is no fallback to PyTorch. The "
              "first call on a GPU loads the program there: make it before capturing a CUDA "
              "graph (as any warm-up does). Forward only: the op has no backward, so call it "
              "under `torch.no_grad()` / `torch.inference_mode()` (autograd through it raises).",
              "", "From C or C++ (no PyTorch): `#include \"kforge_runtime.h\"` (kforge's "
              "runtime/ folder), link `libkforge_runtime.so`, and call `kforge_rt_open(\""
              f"{package}/program\", &p)`, `kforge_rt_workspace_bytes`, `kforge_rt_launch(p, "
              "stream, tensors, n, workspace, bytes)` with the tensors in the table's order.",
              "", "## Evidence", ""]
    ev = evidence
    best = ev.get("best") or {}
    pct = ev.get("percent_sol")
    if pct is None and best.get("fraction_of_sol"):
        pct = 100 * best["fraction_of_sol"]
    rows = [("source", ev.get("source")), ("device", ev.get("device")),
            ("simulated device", ev.get("simulated")),
            ("median", fmt_us(ev.get("median_ns") or best.get("median_ns"))),
            ("SOL time", fmt_us(ev.get("sol_time_ns"))),
            ("% of SOL", None if pct is None else f"{pct:.1f}"),
            ("gates", ", ".join(f"{g.get('gate')}: {g.get('result', g.get('passed'))}"
                                for g in ev.get("gates", []) or [])),
            ("arch", ev.get("arch")), ("note", ev.get("note"))]
    lines += ["| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in rows if v not in (None, "", [])]
    if ev.get("simulated"):
        lines += ["", "The times above are the simulated device's model, not a measurement."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="kforge export (Python side)")
    ap.add_argument("out")
    ap.add_argument("--package", required=True)
    ap.add_argument("--kernelbench")
    a = ap.parse_args(argv)
    pkg_dir = os.path.join(a.out, a.package)
    with open(os.path.join(pkg_dir, "program", "runtime.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    with open(os.path.join(a.out, "spec.json"), encoding="utf-8") as f:
        spec = json.load(f)
    with open(os.path.join(a.out, "evidence.json"), encoding="utf-8") as f:
        evidence = json.load(f)
    op = a.package[len("kforge_"):]
    model_new = False
    if a.kernelbench:
        from kforge_py.export import model_new as mn
        try:
            text, made = mn.model_new_source(a.kernelbench, spec, a.package, op, manifest,
                                             a.out)
        except mn.Mismatch as e:
            print(f"kforge export: {a.kernelbench}: {e}", file=sys.stderr)
            return 2
        shutil.copyfile(a.kernelbench, os.path.join(a.out, "original_model.py"))
        mn.write_constants(made, a.out)
        with open(os.path.join(a.out, "model_new.py"), "w", encoding="utf-8") as f:
            f.write(text)
        model_new = True
    shutil.copyfile(os.path.join(HERE, "op_runtime.py"), os.path.join(pkg_dir, "_kforge_op.py"))
    shutil.copyfile(os.path.join(HERE, "native.py"), os.path.join(pkg_dir, "_kforge_native.py"))
    os.makedirs(os.path.join(pkg_dir, "csrc"), exist_ok=True)
    shutil.copyfile(os.path.join(HERE, "csrc", "kforge_torch.cpp"),
                    os.path.join(pkg_dir, "csrc", "kforge_torch.cpp"))
    files = {os.path.join(pkg_dir, "__init__.py"):
             package_init(op, manifest, spec.get("description", "")),
             os.path.join(a.out, "pyproject.toml"): pyproject(a.package, op),
             os.path.join(a.out, "README.md"):
             readme(a.out, a.package, op, spec, manifest, evidence, model_new)}
    for path, text in files.items():
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
