#!/usr/bin/env python3
"""Which factor makes an exported CUTLASS GEMM slower under the export harness than under
kforge's evaluator (issue 23; bench/NOTES.md, session 18 call 3: exported/kforge 1.06-1.19 for
the fp16/bf16 GEMMs, their CUDA-graph replays too, every row-wise kernel within 1%). Run by
gemm_gap.sh, which times the evaluator (kforge eval) and samples nvidia-smi around this:

  gemm_gap.py spec SPEC DISTRIBUTION OUT    SPEC with every input drawn so ("normal",
                                             "uniform01"): the evaluator's inputs for a phase
  gemm_gap.py time PHASES EXPORT_DIR...     per export, the same built kernel (the exported op
      replayed from a CUDA graph: kernels only, as the evaluator times them) on torch.randn
      ("normal": the harness's and KernelBench's inputs) and torch.rand ("uniform01": kforge's
      timing inputs before the spec's distributions) inputs, each in two protocols:
        alone    10 warm-ups, then 100 trials of it alone back to back (the evaluator's)
        harness  harness.py's Timer: 3 warm-ups, 100 trials interleaved with eager PyTorch and
                 the eager exported op (the harness's, less torch.compile)
      every trial: an L2 flush, CUDA events around the call, a synchronize. One JSON line per
      phase appended to PHASES (its wall interval, for the clocks).
  gemm_gap.py table PHASES SMI_CSV EVAL_DIR  the Markdown table: per problem and phase the
      median, the SM clock and power nvidia-smi sampled over the phase, and three ratios -
      inputs (alone normal / alone uniform01), protocol (harness / alone, normal inputs) and
      launch (alone / kforge eval, same inputs) - whichever is far from 1 is the gap."""
import json
import os
import statistics
import sys
import time
from datetime import datetime

HERE = os.path.dirname(os.path.abspath(__file__))
DISTRIBUTIONS = ("uniform01", "normal")
ORDER = [("alone", "uniform01"), ("alone", "normal"), ("harness", "normal"),
         ("harness", "uniform01")]


def spec_drawn(spec, distribution):
    """A copy of `spec` whose every input is drawn from `distribution`."""
    out = json.loads(json.dumps(spec))
    for entry in out["inputs"].values():
        entry["distribution"] = distribution
    return out


def write_spec(path, distribution, out_path):
    with open(path) as f:
        spec = json.load(f)
    with open(out_path, "w") as f:
        json.dump(spec_drawn(spec, distribution), f, indent=1)


def time_export(d, phases_path):
    import torch
    sys.path.insert(0, HERE)
    import harness
    from kforge_py import spec_torch
    name = os.path.basename(os.path.normpath(d))
    Model, ModelNew, _, get_init_inputs, _, _ = harness.load_models(d)
    model, model_new = Model(*get_init_inputs()).cuda(), ModelNew(*get_init_inputs()).cuda()
    with open(os.path.join(d, "spec.json")) as f:
        spec = json.load(f)
    timer = harness.Timer()
    made = {}
    for dist in DISTRIBUTIONS:
        inputs = harness.to_cuda(spec_torch.make_inputs(spec_drawn(spec, dist), seed=harness.SEED))
        g, _ = harness.graph_of(model_new, inputs)
        made[dist] = (inputs, g)
    for protocol, dist in ORDER:
        inputs, g = made[dist]
        replay = lambda *a, g=g: g.replay()  # noqa: E731
        t0 = time.time()
        if protocol == "alone":
            r = timer.time_us({"exported_graph": replay}, inputs, warmup=10)
        else:
            r = timer.time_us({"eager": model, "exported": model_new, "exported_graph": replay},
                              inputs)
        row = {"problem": name, "phase": f"{protocol}_{dist}", "t0": t0, "t1": time.time(),
               "median_us": r["exported_graph"]["median_us"],
               "nvml_sm_clock_mhz": r["exported_graph"].get("sm_clock_mhz")}
        for other in ("exported", "eager"):
            if other in r:
                row[f"{other}_us"] = r[other]["median_us"]
        with open(phases_path, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)


def number(text):
    try:
        return float(text)
    except ValueError:  # "[N/A]", "[Not Supported]"
        return None


def read_smi(path):
    """[(unix time, sm MHz, max sm MHz, power W, temperature C, throttle reasons)] of
    gemm_gap.sh's nvidia-smi CSV (local-time stamps, as time.time() is compared with them); a
    field nvidia-smi could not read is None, the reasons "-" where not queried."""
    rows = []
    try:
        with open(path) as f:
            for line in f:
                p = [x.strip() for x in line.split(",")]
                try:
                    t = datetime.strptime(p[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
                except ValueError:
                    continue  # an error line
                if len(p) < 5:
                    continue
                rows.append((t, *[number(x) for x in p[1:5]], p[5] if len(p) > 5 else "-"))
    except OSError:
        pass
    return rows


def over(smi, t0, t1):
    """Median SM clock, max clock, power and temperature, and the most frequent throttle
    reasons, of the samples in [t0, t1]; None without samples."""
    s = [r for r in smi if t0 <= r[0] <= t1]
    if not s:
        return None

    def med(i):
        v = [r[i] for r in s if r[i] is not None]
        return statistics.median(v) if v else None
    reasons = [r[5] for r in s]
    return {"n": len(s), "sm_mhz": med(1), "max_mhz": med(2), "power_w": med(3),
            "temp_c": med(4), "throttle": max(set(reasons), key=reasons.count)}


def eval_result(path):
    """(quick-tier median us, full-protocol median us, kforge's own NVML SM clock median over
    the full-protocol samples, the inputs it says it timed on, its compile gate) of a
    `kforge eval --repeat 1 --json` output; Nones where absent."""
    try:
        with open(path) as f:
            j = json.load(f)
    except (OSError, ValueError):
        return None
    report = (j.get("candidates") or [{}])[0].get("report", {})
    quick = (report.get("timing") or {}).get("median_ns")
    t = j.get("timing") or {}
    prog = (t.get("programs") or [{}])[0]
    rep = (prog.get("repetitions") or [{}])[0]
    full = (rep.get("stats") or {}).get("median_ns")
    clocks = [s["sm_clock_mhz"] for s in rep.get("samples", []) if s.get("sm_clock_mhz")]
    compile_gate = next((g.get("message", "") for g in report.get("gates", [])
                         if g.get("gate") == "compile"), "")
    return {"quick_us": quick / 1e3 if quick else None, "median_us": full / 1e3 if full else None,
            "nvml_sm_clock_mhz": statistics.median(clocks) if clocks else None,
            "inputs": (t.get("protocol") or {}).get("inputs"), "compile": compile_gate[:60],
            "status": report.get("status"), "error": j.get("error")}


def fmt(v, spec="{:.1f}"):
    return "-" if v is None else spec.format(v)


def table(phases_path, smi_path, eval_dir):
    smi = read_smi(smi_path)
    phases = []
    with open(phases_path) as f:
        for line in f:
            if line.strip():
                phases.append(json.loads(line))
    problems = list(dict.fromkeys(p["problem"] for p in phases))
    out = ["Same built kernel per problem. kforge eval: --tier quick --repeat 1 (median of the "
           "full tier's protocol: 10 warm-ups, 100 back to back, L2 flush; 'quick' the quick "
           "tier's 3 + 20), on a spec copy whose inputs are all drawn as named. alone/harness: "
           "the exported op's CUDA-graph replay (kernels only), alone with 10 warm-ups and 100 "
           "back to back, or interleaved with eager PyTorch and the eager op as harness.py "
           "times (3 warm-ups); L2 flushed and synchronized every trial. Clocks and power: "
           "nvidia-smi every 20 ms over the phase (SM MHz / max MHz, W, C, throttle reasons "
           "bitmask); 'nvml' kforge's or torch's own per-trial SM clock.", "",
           "| problem | phase | inputs | median us | quick us | SM MHz | max MHz | nvml MHz | "
           "W | C | throttle | n | note |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    verdicts = []
    for name in problems:
        med = {}
        for p in (x for x in phases if x["problem"] == name):
            s = over(smi, p["t0"], p["t1"]) or {}
            quick, note, nvml, inputs = None, "", p.get("nvml_sm_clock_mhz"), ""
            if p["phase"].startswith("eval_"):
                e = eval_result(os.path.join(eval_dir, f"eval_{name}_{p['phase'][5:]}.json")) or {}
                p["median_us"], quick, nvml = e.get("median_us"), e.get("quick_us"), \
                    e.get("nvml_sm_clock_mhz")
                inputs = e.get("inputs") or ""
                note = f"rc {p.get('rc')} {e.get('status') or ''} {e.get('error') or ''} " \
                       f"compile: {e.get('compile', '')}"
                note = " ".join(note.split())[:240]  # one table row
            else:
                inputs = "torch.rand" if p["phase"].endswith("uniform01") else "torch.randn"
                if "exported_us" in p:
                    note = f"eager op {p['exported_us']:.1f}, eager torch {p['eager_us']:.1f}"
            med[p["phase"]] = p.get("median_us")
            out.append(f"| {name} | {p['phase']} | {inputs} | {fmt(p.get('median_us'))} | "
                       f"{fmt(quick)} | {fmt(s.get('sm_mhz'), '{:.0f}')} | "
                       f"{fmt(s.get('max_mhz'), '{:.0f}')} | {fmt(nvml, '{:.0f}')} | "
                       f"{fmt(s.get('power_w'), '{:.0f}')} | {fmt(s.get('temp_c'), '{:.0f}')} | "
                       f"{s.get('throttle', '-')} | {s.get('n', 0)} | {note} |")

        def ratio(a, b):
            return med[a] / med[b] if med.get(a) and med.get(b) else None
        verdicts.append(
            f"- {name}: inputs (alone randn / alone rand) "
            f"{fmt(ratio('alone_normal', 'alone_uniform01'), '{:.3f}')}; protocol (harness / "
            f"alone, randn) {fmt(ratio('harness_normal', 'alone_normal'), '{:.3f}')}; launch "
            f"(alone / kforge eval) rand {fmt(ratio('alone_uniform01', 'eval_uniform01'), '{:.3f}')}"
            f", randn {fmt(ratio('alone_normal', 'eval_normal'), '{:.3f}')}; "
            f"session 18's comparison (harness randn / eval uniform01) "
            f"{fmt(ratio('harness_normal', 'eval_uniform01'), '{:.3f}')}")
    out += ["", "Ratios (the factor far from 1.000 is the gap):"] + verdicts
    print("\n".join(out))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "spec":
        write_spec(*args)
    elif cmd == "time":
        for d in args[1:]:
            try:
                time_export(d, args[0])
            except Exception as e:  # noqa: BLE001 - one problem's failure, said, not a stop
                print(json.dumps({"problem": os.path.basename(os.path.normpath(d)),
                                  "error": f"{type(e).__name__}: {e}"}), flush=True)
    elif cmd == "table":
        table(*args)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
