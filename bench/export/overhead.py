#!/usr/bin/env python3
"""Where the exported op's per-call time goes (issue 23): CPU microseconds per call of each layer
of an exported package's call path, on the GPU machine.

  overhead.py EXPORT_DIR [EXPORT_DIR ...]   one JSON line per export on stdout

Each figure is the median over 300 calls of perf_counter_ns around one call, with a
torch.cuda.synchronize() before each call (so the GPU queue is empty and the figure is the host
time of enqueueing, as in KernelBench's timing loop). Layers, outermost first:
  op            torch.ops.kforge.<op>(*inputs): the dispatcher, the checks, outputs, the launch
  body          the op's CUDA implementation called as a plain Python function (no dispatcher)
  check         Program.check(inputs)
  empty_outputs Program.empty_outputs(device)
  launch        Program.launch(inputs, outputs) (workspace, pointers, stream, ctypes, C launch)
  stream        torch.cuda.current_stream(device).cuda_stream alone
  rt_launch     kforge_rt_launch through ctypes with prebuilt arguments (same pointers)
  rt_rebind     kforge_rt_launch with the output pointer alternating between two buffers (the
                runtime re-binds: param builders run again)
  torch_empty   one torch.empty of the first output's shape (a floor for any allocation)"""
import importlib
import json
import os
import statistics
import sys
import time

import torch

CALLS = 300


def per_call_us(fn):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    t = []
    for _ in range(CALLS):
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        fn()
        t.append(time.perf_counter_ns() - t0)
    torch.cuda.synchronize()
    return round(statistics.median(t) / 1e3, 2)


def package_of(d):
    for name in sorted(os.listdir(d)):
        if os.path.isfile(os.path.join(d, name, "__init__.py")) and name.startswith("kforge_"):
            return name
    raise SystemExit(f"{d}: no kforge_* package")


def measure(d):
    import ctypes
    sys.path.insert(0, os.path.abspath(d))
    pkg = importlib.import_module(package_of(d))
    prog = pkg.PROGRAM
    inputs = [torch.randn(t.shape, device="cuda").to(t.dtype) if t.dtype.is_floating_point
              else torch.zeros(t.shape, dtype=t.dtype, device="cuda") for t in prog.inputs]
    dev = inputs[0].device
    res = {"problem": os.path.basename(os.path.normpath(d)), "gpu": torch.cuda.get_device_name(0)}
    res["op"] = per_call_us(lambda: pkg.op(*inputs))
    body = getattr(pkg, "_body", None)

    def plain():
        device = prog.check(inputs, fake=False)
        outs = prog.empty_outputs(device)
        prog.launch(inputs, outs)
        return outs
    res["body"] = per_call_us((lambda: body(*inputs)) if body else plain)
    res["check"] = per_call_us(lambda: prog.check(inputs, fake=False))
    res["empty_outputs"] = per_call_us(lambda: prog.empty_outputs(dev))
    outs = prog.empty_outputs(dev)
    res["launch"] = per_call_us(lambda: prog.launch(inputs, outs))
    res["stream"] = per_call_us(lambda: torch.cuda.current_stream(dev).cuda_stream)
    h, ws_bytes = prog._handle(dev)
    lib = prog._library()
    ws = torch.empty(max(ws_bytes, 1), dtype=torch.uint8, device=dev)
    tensors = list(inputs) + list(outs)
    ptrs = (ctypes.c_void_p * len(tensors))(*[t.data_ptr() for t in tensors])
    stream = ctypes.c_void_p(torch.cuda.current_stream(dev).cuda_stream)
    wsp = ctypes.c_void_p(ws.data_ptr())
    res["rt_launch"] = per_call_us(lambda: lib.kforge_rt_launch(h, stream, ptrs, len(tensors),
                                                                 wsp, ws_bytes))
    outs2 = prog.empty_outputs(dev)
    ptrs2 = (ctypes.c_void_p * len(tensors))(*[t.data_ptr() for t in list(inputs) + outs2])
    flip = [ptrs, ptrs2]
    state = [0]

    def rebind():
        state[0] ^= 1
        lib.kforge_rt_launch(h, stream, flip[state[0]], len(tensors), wsp, ws_bytes)
    res["rt_rebind"] = per_call_us(rebind)
    o = prog.outputs[0]
    res["torch_empty"] = per_call_us(lambda: torch.empty(o.shape, dtype=o.dtype, device=dev))
    return res


def main():
    for d in sys.argv[1:]:
        try:
            print(json.dumps(measure(d)), flush=True)
        except Exception as e:  # noqa: BLE001 - one export's failure is a line, not a stop
            print(json.dumps({"problem": d, "error": f"{type(e).__name__}: {e}"}), flush=True)


if __name__ == "__main__":
    main()
