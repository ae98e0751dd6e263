#!/usr/bin/env python3
"""bench/export's table (Markdown) from harness.py's JSON lines, joined with kforge's own
evaluator medians (WORK/<problem>/kforge_eval.json, `kforge eval --tier full --json`):
    table.py RESULTS.jsonl WORK_DIR"""
import json
import math
import os
import re
import statistics
import sys


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def us(x):
    return "-" if x is None else f"{x:.1f}"


def kforge_clock(work, problem):
    """The median SM clock (MHz) of kforge's timing samples, None where not recorded."""
    try:
        with open(os.path.join(work, problem, "kforge_eval.json")) as f:
            text = f.read()
    except OSError:
        return None
    clocks = [int(c) for c in re.findall(r'"sm_clock_mhz":\s*(\d+)', text) if int(c) > 0]
    return statistics.median(clocks) if clocks else None


def export_launch_mode(work, problem):
    """How the exported program launches (its plan.json's launch_mode): "stream" or "graph"."""
    d = os.path.join(work, problem)
    for pkg in (os.listdir(d) if os.path.isdir(d) else []):
        try:
            with open(os.path.join(d, pkg, "program", "plan.json")) as f:
                return json.load(f).get("launch_mode", "stream")
        except (OSError, ValueError):
            continue
    return "stream"


def kforge_eval(work, problem):
    """(median in us or None, status or a reason, note). The evaluator's median is its graph
    samples' where it chose graph launch at the full tier (eval/launch_mode.h); an export that
    launches on the stream (a spec's: no run chose graph) is compared with the evaluator's
    stream median instead, like for like, and the note says so."""
    try:
        with open(os.path.join(work, problem, "kforge_eval.json")) as f:
            j = json.load(f)
    except (OSError, ValueError):
        return None, "not evaluated", ""
    t = (j.get("timing") or {}).get("median_ns")
    timing = next((g.get("evidence") or {} for g in j.get("gates", [])
                   if g.get("gate") == "timing"), {})
    launch = timing.get("launch") or {}
    if (launch.get("launch_mode") == "graph" and launch.get("stream_median_ns")
            and export_launch_mode(work, problem) == "stream"):
        return (launch["stream_median_ns"] / 1e3, j.get("status", "?"),
                f" (stream; graph {t / 1e3:.1f})" if t else " (stream)")
    return (t / 1e3 if t else None), j.get("status", "?"), ""


def host_column(r):
    """'9.1/3.2 (33.0)': the host us of the exported call and of the graph replay, and the
    flush's GPU us ('-' for rows from before the harness recorded them)."""
    e, g = r["exported"].get("host_median_us"), r["exported_graph"].get("host_median_us")
    if e is None or g is None:
        return "-"
    f = r.get("flush_median_us")
    return f"{e:.1f}/{g:.1f}" + (f" ({f:.1f})" if f is not None else "")


def main(path, work):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    rows.sort(key=lambda r: (r.get("kind", ""), r["problem"]))
    gpu = next((r.get("gpu") for r in rows if r.get("gpu")), "?")
    print(f"GPU: {gpu}. Medians of 100 trials in us (CUDA events, L2 flushed, synchronized per "
          "trial); 'exported' = ModelNew eager (the op's CUDA kernel: the compiled kforge_torch, "
          "or the ctypes path where marked), 'graph' = "
          "ModelNew replayed from a CUDA graph (kernels only), 'kforge' = kforge eval --tier "
          "full; speedups are eager/exported and compile/exported; 'host' = the host us of "
          "the exported call and of the graph replay (perf_counter around the call), 'flush' = "
          "the L2 flush's GPU us, which hides that much of a call's host time (overhead shows "
          "where the host time outlasts it).\n")
    print("| problem | correct (5 trials) | in CUDA graph | compile fullgraph | kforge | exported "
          "| graph | overhead | host exported/graph (flush) | exported/kforge "
          "| MHz exported/kforge | eager | compile | x eager | x compile |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    ok = within = within_clock = clocked = big = 0
    overheads = []
    for r in rows:
        k_us, k_status, k_note = kforge_eval(work, r["problem"])
        if "error" in r:
            print(f"| {r['problem']} | ERROR: {r['error'][:100]} |" + " |" * 13)
            continue
        ok += bool(r["correct"] and r["cuda_graph_same"] and r["compile_fullgraph_same"])
        e = r["exported"]["median_us"]
        ratio = e / k_us if k_us else None
        k_mhz, e_mhz = kforge_clock(work, r["problem"]), r["exported"].get("sm_clock_mhz")
        mhz = f"{e_mhz:.0f}/{k_mhz:.0f}" if k_mhz and e_mhz else "-"
        if k_us and k_us > 50:
            big += 1
            within += abs(ratio - 1) <= 0.03
            if k_mhz and e_mhz:  # at kforge's clock, had the time followed it (compute-bound)
                clocked += 1
                within_clock += abs(ratio * e_mhz / k_mhz - 1) <= 0.03
        elif k_us:
            overheads.append(r["overhead_us"])
        correct = "yes" if r["correct"] else "NO: " + r.get("correct_message", "")
        f64 = r.get("fp64_error") or {}
        if "model" in f64:  # a failed check: which side is nearer the fp64 result
            correct += (f"; vs fp64: Model {f64['model']:.3g}, ModelNew "
                        f"{f64['model_new']:.3g}")
        kf = us(k_us) + k_note if k_us else f"- ({k_status})"
        op_path = r.get("op_path", "ctypes")  # rows from before the compiled op: ctypes
        path = "" if op_path == "compiled" else f" ({op_path})"
        print(f"| {r['problem']}{path} | {correct} | {'same' if r['cuda_graph_same'] else 'DIFF'}"
              f" | {'same' if r['compile_fullgraph_same'] else 'DIFF'} | {kf} | {us(e)}"
              f" | {us(r['exported_graph']['median_us'])} | {us(r['overhead_us'])}"
              f" | {host_column(r)}"
              f" | {'-' if ratio is None else '%.3f' % ratio} | {mhz}"
              f" | {us(r['eager']['median_us'])} | {us(r['compile']['median_us'])}"
              f" | {r['speedup_vs_eager']:.2f} | {r['speedup_vs_compile']:.2f} |")
    held = [r for r in rows if "error" not in r and "correct_policy" in r]
    if held:  # harness.py's policy rows: PyTorch without TF32, as the fp32_strict policy
        print("\nThe same rows with PyTorch held to the exported policy (fp32_strict: "
              "torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False; "
              "the table above is PyTorch's defaults, cuDNN in TF32, as KernelBench runs):\n")
        print("| problem | correct (5 trials, Model without TF32) | eager | compile | x eager "
              "| x compile |")
        print("|---|---|---|---|---|---|")
        for r in held:
            c = "yes" if r["correct_policy"] else "NO: " + r.get("correct_policy_message", "")
            print(f"| {r['problem']} | {c} | {us(r['eager_policy']['median_us'])}"
                  f" | {us(r['compile_policy']['median_us'])}"
                  f" | {r['speedup_vs_eager_policy']:.2f} | {r['speedup_vs_compile_policy']:.2f} |")
    timed = [r for r in rows if "error" not in r]
    for label, key in (("KernelBench's check (PyTorch defaults)", ""),
                       ("PyTorch held to the policy", "_policy")):
        # a row without a policy variant is the same under both
        good = [r for r in timed if r.get("correct" + key, r["correct"])]
        if good:
            ge = geomean([r.get("speedup_vs_eager" + key, r["speedup_vs_eager"]) for r in good])
            gc = geomean([r.get("speedup_vs_compile" + key, r["speedup_vs_compile"])
                          for r in good])
            print(f"\n{label}: {len(good)} of {len(rows)} correct; over them the geomean "
                  f"speedup is {ge:.2f}x eager, {gc:.2f}x torch.compile.")
    paths = sorted({r.get("op_path", "ctypes") for r in rows if "error" not in r})
    print(f"\nop path: {', '.join(paths)}. {ok} of {len(rows)} exported models correct, the same in a CUDA graph and under "
          f"torch.compile(fullgraph=True); {within} of {big} kernels over 50 us within 3% of "
          "kforge's evaluator median"
          + (f" ({within_clock} of {clocked} with the exported time scaled to the evaluator's "
             "SM clock, which holds for compute-bound kernels only)" if clocked else "")
          + (f"; per-call overhead of the small ones {min(overheads):.1f}-{max(overheads):.1f} us"
             if overheads else ""))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
