#!/usr/bin/env python3
"""Where the exported op's per-call time goes (issue 23): CPU microseconds per call of each layer
of an exported package's call path, on the GPU machine, for both of the op's CUDA kernels: the
compiled one (kforge_torch, C++) and the ctypes path. One process per path (a process registers
one of them: python/kforge_py/export/native.py).

  overhead.py EXPORT_DIR [EXPORT_DIR ...]   one JSON line per export and path, then one summary
                                            line per export (compiled vs ctypes, same output?)
The compiled process runs with KFORGE_TORCH_EXT as set (default auto: an importable kforge_torch
of this torch, else the package's csrc/ built once with torch.utils.cpp_extension into
$KFORGE_TORCH_EXT_CACHE); the ctypes one with KFORGE_TORCH_EXT=off.

Each figure is the median over 300 calls of perf_counter_ns around one call, with a
torch.cuda.synchronize() before each call (so the GPU queue is empty and the figure is the host
time of enqueueing, as in KernelBench's timing loop). Layers, outermost first:
  both paths
    op            torch.ops.kforge.<op>(*inputs): the whole call
    op_cold       the same after 256 MiB written on the CPU before each call (cold host caches;
                  50 calls)
    op_default    torch.ops.kforge.<op>.default(*inputs) (no OpOverloadPacket __call__)
    rt_launch     kforge_rt_launch through ctypes with prebuilt arguments (same pointers)
    torch_empty   one torch.empty of the first output's shape (a floor for any allocation)
    torch_empty_cold  the same after 256 MiB written on the CPU (PyTorch's own cold figure)
  ctypes path only
    body          the op's Python CUDA implementation called as a plain function
    check         Program.check(inputs)
    empty_outputs Program.empty_outputs(device)
    launch        Program.launch(inputs, outputs) (workspace, pointers, stream, ctypes, C launch)
    stream        torch.cuda.current_stream(device).cuda_stream alone
    rt_rebind     kforge_rt_launch with the output pointer alternating between two buffers
Each process also saves the op's outputs for one seeded input (the summary compares them)."""
import ctypes
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

CALLS = 300


def per_call_us(fn, before=None, calls=CALLS):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    t = []
    for _ in range(calls):
        if before is not None:
            before()
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        fn()
        t.append(time.perf_counter_ns() - t0)
    torch.cuda.synchronize()
    return round(statistics.median(t) / 1e3, 2)


SWEEP = None


def sweep():
    """Writes 256 MiB on the CPU: the host's caches hold none of the op's path afterwards (as
    after other work - another process's, or a network's other ops)."""
    global SWEEP
    if SWEEP is None:
        SWEEP = torch.empty(256 << 20, dtype=torch.uint8)
    SWEEP.add_(1)


def package_of(d):
    for name in sorted(os.listdir(d)):
        if os.path.isfile(os.path.join(d, name, "__init__.py")) and name.startswith("kforge_"):
            return name
    raise SystemExit(f"{d}: no kforge_* package")


def seeded_inputs(prog):
    torch.manual_seed(0)
    return [torch.randn(t.shape, device="cuda").to(t.dtype) if t.dtype.is_floating_point
            else torch.zeros(t.shape, dtype=t.dtype, device="cuda") for t in prog.inputs]


def ctypes_layers(res, pkg, prog, inputs):
    dev = inputs[0].device
    body = pkg._body
    res["body"] = per_call_us(lambda: body(*inputs))
    res["check"] = per_call_us(lambda: prog.check(inputs, fake=False))
    res["empty_outputs"] = per_call_us(lambda: prog.empty_outputs(dev))
    outs = prog.empty_outputs(dev)
    res["launch"] = per_call_us(lambda: prog.launch(inputs, outs))
    res["stream"] = per_call_us(lambda: torch.cuda.current_stream(dev).cuda_stream)


def rt_layers(res, prog, inputs, rebind):
    dev = inputs[0].device
    h, ws_bytes = prog._handle(dev)
    lib = prog._library()
    ws = torch.empty(max(ws_bytes, 1), dtype=torch.uint8, device=dev)
    outs = prog.empty_outputs(dev)
    tensors = list(inputs) + list(outs)
    ptrs = (ctypes.c_void_p * len(tensors))(*[t.data_ptr() for t in tensors])
    stream = ctypes.c_void_p(torch.cuda.current_stream(dev).cuda_stream)
    wsp = ctypes.c_void_p(ws.data_ptr())
    res["rt_launch"] = per_call_us(lambda: lib.kforge_rt_launch(h, stream, ptrs, len(tensors),
                                                                 wsp, ws_bytes))
    if not rebind:
        return
    outs2 = prog.empty_outputs(dev)
    ptrs2 = (ctypes.c_void_p * len(tensors))(*[t.data_ptr() for t in list(inputs) + outs2])
    flip = [ptrs, ptrs2]
    state = [0]

    def alternate():
        state[0] ^= 1
        lib.kforge_rt_launch(h, stream, flip[state[0]], len(tensors), wsp, ws_bytes)
    res["rt_rebind"] = per_call_us(alternate)


def measure(d, save_dir):
    sys.path.insert(0, os.path.abspath(d))
    pkg = importlib.import_module(package_of(d))
    prog = pkg.PROGRAM
    path = "compiled" if getattr(pkg, "NATIVE", None) is not None else "ctypes"
    res = {"problem": os.path.basename(os.path.normpath(d)), "path": path,
           "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__}
    if path == "ctypes":
        res["why"] = getattr(sys.modules.get("_kforge_torch_state"), "why", None)
    inputs = seeded_inputs(prog)
    with torch.no_grad():
        outs = pkg.op(*inputs)
    torch.cuda.synchronize()
    outs = outs if isinstance(outs, tuple) else (outs,)
    torch.save([o.cpu() for o in outs], os.path.join(save_dir, f"{res['problem']}.{path}.pt"))
    res["op"] = per_call_us(lambda: pkg.op(*inputs))
    # the same call on cold host caches (the harness's exported-minus-graph overhead is the host
    # time past the L2 flush's ~30 us; hot, the op takes ~7 us)
    res["op_cold"] = per_call_us(lambda: pkg.op(*inputs), before=sweep, calls=50)
    overload = pkg.op.default
    res["op_default"] = per_call_us(lambda: overload(*inputs))
    with torch.no_grad():
        res["op_no_grad"] = per_call_us(lambda: pkg.op(*inputs))
    if path == "ctypes":
        ctypes_layers(res, pkg, prog, inputs)
    rt_layers(res, prog, inputs, rebind=path == "ctypes")
    o = prog.outputs[0]
    res["torch_empty"] = per_call_us(lambda: torch.empty(o.shape, dtype=o.dtype,
                                                         device=inputs[0].device))
    res["torch_empty_cold"] = per_call_us(lambda: torch.empty(o.shape, dtype=o.dtype,
                                                              device=inputs[0].device),
                                          before=sweep, calls=50)
    return res


def child(dirs, save_dir):
    for d in dirs:
        try:
            print(json.dumps(measure(d, save_dir)), flush=True)
        except Exception as e:  # noqa: BLE001 - one export's failure is a line, not a stop
            print(json.dumps({"problem": os.path.basename(os.path.normpath(d)),
                              "error": f"{type(e).__name__}: {e}"}), flush=True)


def summary(problem, rows, save_dir):
    by = {r.get("path"): r for r in rows if r.get("problem") == problem and "op" in r}
    s = {"problem": problem, "summary": True}
    for path in ("compiled", "ctypes"):
        if path in by:
            s[f"{path}_op_us"] = by[path]["op"]
    if "compiled" in by and "ctypes" in by:
        s["saved_us"] = round(by["ctypes"]["op"] - by["compiled"]["op"], 2)
        a = torch.load(os.path.join(save_dir, f"{problem}.compiled.pt"))
        b = torch.load(os.path.join(save_dir, f"{problem}.ctypes.pt"))
        s["same_output"] = len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))
        if not s["same_output"]:
            s["max_abs_diff"] = max(float((x.double() - y.double()).abs().max())
                                    for x, y in zip(a, b))
    return s


def main():
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[3:], sys.argv[2])
        return
    dirs = sys.argv[1:]
    rows = []
    with tempfile.TemporaryDirectory(prefix="kforge-overhead-") as save_dir:
        for mode in (os.environ.get("KFORGE_TORCH_EXT", "auto"), "off"):
            env = dict(os.environ, KFORGE_TORCH_EXT=mode)
            r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", save_dir,
                                *dirs], capture_output=True, text=True, env=env)
            sys.stderr.write(r.stderr[-4000:])
            for line in r.stdout.splitlines():
                print(line, flush=True)
                rows.append(json.loads(line))
            if r.returncode != 0:
                print(json.dumps({"mode": mode, "error": f"child exit {r.returncode}"}))
        for d in dirs:
            print(json.dumps(summary(os.path.basename(os.path.normpath(d)), rows, save_dir)))


if __name__ == "__main__":
    main()
