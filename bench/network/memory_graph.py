#!/usr/bin/env python3
"""bench/network/memory_graph.py: one row per exported network program (issue 26), joined from
   - the package's plan.json "memory" (codegen/memory_plan.h: inputs/params/outputs, the arena of
     intermediates, the peak = their sum; builder workspaces are sized at launch and not in it),
   - `kforge eval --tier full --json`'s timing gate evidence "launch" (eval/launch_mode.h: the
     stream and graph medians and the choice),
   - PyTorch eager's torch.cuda.max_memory_allocated over one forward of the KernelBench file's
     Model under torch.no_grad() (weights and inputs on the GPU, the peak reset just before the
     call, so it counts them plus every intermediate and the output, as kforge's peak does).
  memory_graph.py ROW_DIR...   (each ROW_DIR: NAME, source.py, package/, eval.json)
Prints a Markdown table and writes the rows as JSON lines to $OUT/memory_graph.jsonl."""
import glob
import json
import os
import runpy
import sys


def eager_peak_bytes(source):
    import torch
    ns = runpy.run_path(source)
    torch.manual_seed(42)
    model = ns["Model"](*ns["get_init_inputs"]()).cuda()
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in ns["get_inputs"]()]
    torch.cuda.synchronize()
    with torch.no_grad():
        model(*inputs)  # warm-up: cuDNN/cuBLAS workspaces settle
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        out = model(*inputs)
        torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    del out, model, inputs
    torch.cuda.empty_cache()
    return peak


def launch_of(eval_json):
    try:
        with open(eval_json) as f:
            rep = json.load(f)
    except (OSError, ValueError):
        return {}
    reports = rep if isinstance(rep, list) else rep.get("reports", [rep])
    for r in reports:
        for g in r.get("gates", []):
            if g.get("gate") == "timing":
                ev = g.get("evidence", {})
                out = dict(ev.get("launch", {}))
                out["median_ns"] = ev.get("candidate", {}).get("median_ns")
                return out
        if r.get("gates"):
            return {"failed": "; ".join(f"{g['gate']}: {g.get('message', '')[:80]}"
                                        for g in r["gates"] if not g.get("passed"))}
    return {}


def mib(b):  # KiB below 1 MiB: the examples are small
    if b is None:
        return "-"
    return f"{b / 2**20:.2f} MiB" if b >= 2**20 else f"{b / 2**10:.1f} KiB"


def main(dirs):
    rows = []
    for d in dirs:
        name = open(os.path.join(d, "NAME")).read().strip()
        row = {"problem": name}
        plans = glob.glob(os.path.join(d, "package", "*", "program", "plan.json"))
        if plans:
            with open(plans[0]) as f:
                plan = json.load(f)
            row.update(plan.get("memory", {}))
            row["buffers"] = len(plan.get("buffers", []))
            row["launches"] = len(plan.get("kernels", []))
        try:
            row["eager_peak_bytes"] = eager_peak_bytes(os.path.join(d, "source.py"))
        except Exception as e:  # a row, not a crash: the table says why
            row["eager_error"] = f"{type(e).__name__}: {e}"[:120]
        row.update(launch_of(os.path.join(d, "eval.json")))
        rows.append(row)
    out = os.environ.get("OUT", "/tmp/kforge-out")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "memory_graph.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    print("| problem | launches | buffers | arena (no reuse) | kforge peak | eager peak "
          "| peak <= eager | stream us | graph us | chosen |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        peak, eager = r.get("peak_bytes"), r.get("eager_peak_bytes")
        ok = "-" if peak is None or eager is None else ("yes" if peak <= eager else "NO")
        s, g = r.get("stream_median_ns"), r.get("graph_median_ns")
        print(f"| {r['problem']} | {r.get('launches', '-')} | {r.get('buffers', '-')} "
              f"| {mib(r.get('arena_bytes'))} ({mib(r.get('unshared_bytes'))}) | {mib(peak)} "
              f"| {mib(eager) if eager is not None else r.get('eager_error', '-')} | {ok} "
              f"| {'-' if s is None else f'{s / 1e3:.1f}'} | {'-' if g is None else f'{g / 1e3:.1f}'} "
              f"| {r.get('launch_mode', r.get('failed', r.get('note', '-')))} |")


if __name__ == "__main__":
    main(sys.argv[1:])
