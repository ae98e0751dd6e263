#!/usr/bin/env python3
"""Host time of ModelNew's own Python per call, on the CPU with the op replaced (issue 23: the
exported kb_04_layer_norm cost ~40 us per call above its 8.6 us kernel in session 18's GPU
table; bench/export/overhead.py measures the op's own layers on the GPU machine).

  cpu_overhead.py EXPORT_DIR [--calls N]     (an export with model_new.py; --no-build is fine)

torch.ops.kforge.<op> is replaced by a plain function returning a preallocated output (about
0.1 us), so each figure is what ModelNew adds around the op's dispatch. Medians over N calls of
perf_counter_ns, microseconds:
  call          model_new(*inputs): Module.__call__ + forward
  forward       ModelNew.forward alone
  state         _state(): the op's non-argument inputs (parameters read through the table, the
                cached views and constants)
  attr_reshape  the same inputs read as the generator before this one wrote them
                (self.<path>.reshape(shape) per input: attribute chains and a view per call)
  stub          the replaced op alone
  call_cold     call, after 256 MiB written on the CPU before each (cold host caches; 200 calls)
  call_after_sleep  call, after a 300 us sleep before each (the thread idle as while a GPU works)
Then the aten ops one call runs (torch.profiler; none but the op is the goal) and a cProfile
of the calls' Python. One JSON line, then the profiles."""
import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))


def per_call_us(fn, calls, before=None):
    for _ in range(20):
        fn()
    t = []
    for _ in range(calls):
        if before is not None:
            before()
        t0 = time.perf_counter_ns()
        fn()
        t.append(time.perf_counter_ns() - t0)
    return round(statistics.median(t) / 1e3, 2)


def cold_hooks():
    """(sweep, sleep): what runs before each call of the cold figures - 256 MiB written on the
    CPU (another process's or the network's other work: the host's caches hold none of the
    call's path) and a 300 us sleep (the thread idle, as while the GPU works)."""
    buf = torch.empty(256 << 20, dtype=torch.uint8)
    return (lambda: buf.add_(1)), (lambda: time.sleep(300e-6))


def attr_reshape_feeds(model, feeds):
    """The non-argument inputs as the earlier generator fed them (attribute chains, a reshape
    per input per call)."""
    def fn():
        out = []
        for f in feeds:
            v = model
            for part in f.path.split("."):
                v = getattr(v, part)
            out.append(v.reshape(list(f.shape)))
        return out
    return fn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--calls", type=int, default=2000)
    a = ap.parse_args()
    from kforge_py.export import check_model_new, feed_plan
    standin = check_model_new.StandIn(a.dir)
    ns = standin.load()
    with open(os.path.join(a.dir, "spec.json")) as f:
        spec = json.load(f)
    p = feed_plan.plan(os.path.join(a.dir, "original_model.py"), spec)
    torch.manual_seed(0)
    model = ns["ModelNew"](*ns["get_init_inputs"]())
    torch.manual_seed(1)
    inputs = ns["get_inputs"]()
    outs = [torch.empty(d.shape, dtype=d.dtype) for d in standin.program.outputs]
    result = outs[0] if len(outs) == 1 else tuple(outs)

    def stub(*args):
        return result
    setattr(torch.ops.kforge, standin.op, stub)  # forward looks the op up per call
    device = inputs[0].device
    attrs = [f for f in p.feeds if f.kind == "attr"]
    row = {"export": os.path.basename(os.path.normpath(a.dir)), "inputs": len(p.feeds),
           "attributes": len(attrs),
           "views": sum(1 for f in attrs if tuple(f.attr_shape) != tuple(f.shape)),
           "torch": torch.__version__}
    with torch.no_grad():
        row["call"] = per_call_us(lambda: model(*inputs), a.calls)
        row["forward"] = per_call_us(lambda: ns["ModelNew"].forward(model, *inputs), a.calls)
        row["state"] = per_call_us(lambda: ns["_state"](model, device), a.calls)
        row["attr_reshape"] = per_call_us(attr_reshape_feeds(model, attrs), a.calls)
        row["stub"] = per_call_us(lambda: stub(*inputs), a.calls)
        swept, slept = cold_hooks()
        cold_calls = max(1, min(a.calls, 200))
        row["call_cold"] = per_call_us(lambda: model(*inputs), cold_calls, before=swept)
        row["call_after_sleep"] = per_call_us(lambda: model(*inputs), cold_calls, before=slept)
        print(json.dumps(row))
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            for _ in range(10):
                model(*inputs)
        events = prof.key_averages()
        print(f"aten ops in 10 calls: {len(events)}")
        if len(events):
            print(events.table(sort_by="cpu_time_total", row_limit=12))
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(a.calls):
            model(*inputs)
        pr.disable()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(12)
    print(s.getvalue())


if __name__ == "__main__":
    main()
