"""`kforge baseline`: PyTorch eager and torch.compile times of problem specs on the GPU, with
the timing protocol of kforge's evaluator: warm-up apart; then per iteration an L2 flush (a
buffer of 2x L2 written) and CUDA events around the call alone; >= 50 samples (their median,
IQR and bootstrap 95% CI of the median are computed by `kforge baseline` with kforge's one
statistics implementation, common/stats.h); SM/memory clocks per sample where pynvml is present.
fp32_strict problems (or --fp32-strict) run with TF32 off and float32 matmul precision
"highest", and the settings are recorded. Prints one JSON document on stdout; `kforge
baseline` stores it (report/baseline.h labels) and prints the summary.

usage: python -m kforge_py.baseline SPEC... [--modes eager,compile_default,compile_max_autotune]
           [--iters 100] [--warmup 10] [--fp32-strict] [--gpu 0]
"""
import argparse
import ctypes
import json
import sys
import time

from kforge_py import EXIT_ENVIRONMENT, EXIT_FAILURE, EXIT_OK, EXIT_USER_ERROR

MODES = {"eager": None, "compile_default": "default", "compile_max_autotune": "max-autotune"}
DEFAULT_TOL = {"fp32_strict": 1e-4, "tf32": 5e-3, "bf16": 2e-2, "fp16": 1e-2}


def log(msg):
    print(f"kforge baseline: {msg}", file=sys.stderr, flush=True)


class Clocks:
    """SM / memory clock, temperature and throttle reasons through pynvml, when present."""

    def __init__(self, index):
        self.nvml, self.handle, self.note = None, None, ""
        if index is None:
            self.note = "clocks not recorded: no GPU"
            return
        try:
            import pynvml
            pynvml.nvmlInit()
            self.handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            self.nvml = pynvml
        except Exception as e:  # no pynvml or no NVML: times stand, clocks are not recorded
            self.note = f"clocks not recorded: pynvml unavailable ({type(e).__name__})"

    def sample(self):
        if not self.nvml:
            return {}
        n, h = self.nvml, self.handle
        out = {}
        for key, fn in (("sm_clock_mhz", lambda: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM)),
                        ("mem_clock_mhz", lambda: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_MEM)),
                        ("temperature_c",
                         lambda: n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU)),
                        ("throttle_reasons",
                         lambda: n.nvmlDeviceGetCurrentClocksThrottleReasons(h))):
            try:
                out[key] = int(fn())
            except Exception:
                pass
        return out


def driver_string():
    try:
        v = ctypes.c_int()
        ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(v))
        return f"CUDA driver {v.value}"
    except OSError:
        return "CUDA driver unknown"


def uuid_string(uuid):
    """The device identity as kforge's CUDA device writes it (device/cuda_device.cpp):
    "GPU-" and the 16 uuid bytes as lower-case 8-4-4-4-12 hex."""
    raw = getattr(uuid, "bytes", None)
    if raw is not None and len(raw) == 16:
        h = bytes(raw).hex()
        return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    text = str(uuid).lower()
    return "GPU-" + (text[4:] if text.startswith("gpu-") else text)


def device_info(torch, index):
    p = torch.cuda.get_device_properties(index)
    return {"index": index, "name": p.name, "uuid": uuid_string(getattr(p, "uuid", "")),
            "driver": driver_string(), "l2_bytes": int(getattr(p, "L2_cache_size", 0)),
            "sm_count": p.multi_processor_count,
            "compute_capability": f"{p.major}.{p.minor}"}


def apply_precision(torch, policy, strict):
    """TF32 only where the policy allows it; strict fp32 otherwise. Returns what is set."""
    tf32 = policy == "tf32" and not strict
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.set_float32_matmul_precision("high" if tf32 else "highest")
    return {"fp32_strict": policy == "fp32_strict" or strict,
            "cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
            "cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
            "float32_matmul_precision": torch.get_float32_matmul_precision()}


class CudaTimer:
    """CUDA events around one call on the current stream."""

    def __init__(self, torch):
        self.torch = torch
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def sync(self):
        self.torch.cuda.synchronize()

    def time_ns(self, fn, args):
        self.start.record()
        fn(*args)
        self.end.record()
        self.end.synchronize()
        return self.start.elapsed_time(self.end) * 1e6


class HostTimer:
    """perf_counter around one call: only for `--device cpu`, which tests the tool without a
    GPU; its times are never baselines (kforge baseline does not offer it)."""

    def sync(self):
        pass

    def time_ns(self, fn, args):
        t0 = time.perf_counter_ns()
        fn(*args)
        return float(time.perf_counter_ns() - t0)


def time_mode(timer, fn, args, flush, iters, warmup, clocks):
    for _ in range(warmup):
        fn(*args)
    timer.sync()
    samples, clk = [], []
    for _ in range(iters):
        flush.add_(1)  # writes 2x L2: cold cache, and kept out of the timed interval
        samples.append(timer.time_ns(fn, args))
        clk.append(clocks.sample())
    return samples, clk


def mark_static_inputs(torch, inputs):
    """Marks the inputs as buffers at fixed addresses, as kforge's own are (allocated once,
    reused by every timed run). Without it, the CUDA graphs of mode="max-autotune" copy every
    input into the graph's own buffers on each call, and that copy was timed: gemm_large_k_bf16
    817 us vs eager 338 us, memory-bound problems ~1.8x eager (H200, 2026-12-01). Returns
    whether every input was marked."""
    try:
        for t in inputs:
            torch._dynamo.mark_static_address(t)
        return True
    except Exception:  # an older torch without it: the copies stay in the time (recorded)
        return False


def max_diff(torch, a, b):
    return max(float((x.double() - y.double()).abs().max()) for x, y in zip(a, b))


def run_problem(torch, path, args, flush, clocks, timer):
    from kforge_py import spec_torch
    with open(path) as f:
        spec = json.load(f)
    policy = spec["precision"]["policy"]
    settings = apply_precision(torch, policy, args.fp32_strict)
    inputs = spec_torch.make_inputs(spec, device=args.device, seed=args.seed)
    forward = spec_torch.make_forward(spec)
    tol = spec["precision"].get("atol", DEFAULT_TOL[policy])
    rtol = spec["precision"].get("rtol", DEFAULT_TOL[policy])
    result = {"spec": path, "problem": spec["name"], "policy": policy, "settings": settings,
              "modes": {}}
    with torch.no_grad():
        reference = forward(*inputs)
        timer.sync()
        for mode in args.modes:
            entry = {"status": "ok"}
            try:
                torch._dynamo.reset()
                fn = forward
                if MODES[mode] is not None:
                    entry["static_input_addresses"] = mark_static_inputs(torch, inputs)
                    fn = torch.compile(forward, mode=MODES[mode])
                t0 = time.perf_counter()
                out = fn(*inputs)
                timer.sync()
                entry["first_call_s"] = time.perf_counter() - t0
                diff = max_diff(torch, out, reference)
                entry["max_abs_diff_vs_eager"] = diff
                scale = max(float(r.double().abs().max()) for r in reference)
                if not diff <= tol + rtol * scale:
                    entry["status"] = "incorrect"
                    entry["message"] = f"differs from eager by {diff:.3g} (tolerance {tol}+{rtol}*|ref|)"
                log(f"{spec['name']}: timing {mode} ({args.iters} iterations)")
                samples, clk = time_mode(timer, fn, inputs, flush, args.iters, args.warmup, clocks)
                entry["samples_ns"] = samples
                entry["clocks"] = clk
            except Exception as e:  # a failed compile is a result for that mode
                static = {k: v for k, v in entry.items() if k == "static_input_addresses"}
                entry = {"status": "failed", "message": f"{type(e).__name__}: {e}"[:2000], **static}
            result["modes"][mode] = entry
    return result


def main(argv=None):
    ap = argparse.ArgumentParser(prog="kforge baseline")
    ap.add_argument("specs", nargs="+")
    ap.add_argument("--modes", default="eager,compile_default,compile_max_autotune")
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--gpu", type=int, default=0)
    ap.add_argument("--fp32-strict", action="store_true")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                    help=argparse.SUPPRESS)  # cpu: tests the tool on a host clock, no GPU
    args = ap.parse_args(argv)
    args.modes = [m for m in args.modes.split(",") if m]
    for m in args.modes:
        if m not in MODES:
            log(f"--modes: unknown mode {m!r}; known modes: {', '.join(MODES)}")
            return EXIT_USER_ERROR
    if args.iters < 50:
        log("--iters: the timing protocol takes the median of at least 50 samples")
        return EXIT_USER_ERROR
    try:
        import torch
    except ImportError as e:
        log(f"PyTorch is not installed for {sys.executable} ({e}); set KFORGE_PYTHON to a "
            "Python with torch")
        return EXIT_ENVIRONMENT
    if args.device == "cpu":
        info = {"index": 0, "name": "cpu (test only: host clock, not a baseline)",
                "uuid": "cpu-test", "driver": "none", "l2_bytes": 0}
        timer = HostTimer()
    else:
        if not torch.cuda.is_available():
            log(f"no CUDA GPU is visible to PyTorch (torch {torch.__version__}, CUDA build "
                f"{torch.version.cuda}); the PyTorch baselines need a GPU")
            return EXIT_ENVIRONMENT
        if args.gpu >= torch.cuda.device_count():
            log(f"--gpu: GPU {args.gpu} does not exist ({torch.cuda.device_count()} visible)")
            return EXIT_USER_ERROR
        torch.cuda.set_device(args.gpu)
        info = device_info(torch, args.gpu)
        timer = CudaTimer(torch)
    flush = torch.zeros(max(2 * info["l2_bytes"], 1 << 20) // 4, dtype=torch.float32,
                        device=args.device)
    clocks = Clocks(args.gpu if args.device == "cuda" else None)
    try:
        import triton
        triton_version = triton.__version__
    except ImportError:
        triton_version = None
    doc = {"tool": "kforge_py.baseline", "device": info, "torch": torch.__version__,
           "torch_cuda": torch.version.cuda, "triton": triton_version,
           "protocol": {"iters": args.iters, "warmup": args.warmup,
                        "l2_flush_bytes": flush.numel() * 4,
                        "timer": ("cuda events per iteration" if args.device == "cuda"
                                  else "host perf_counter (test only)"),
                        "clocks": clocks.note or "pynvml per sample", "seed": args.seed},
           "results": []}
    failed = False
    for path in args.specs:
        r = run_problem(torch, path, args, flush, clocks, timer)
        failed |= any(m["status"] != "ok" for m in r["modes"].values())
        doc["results"].append(r)
    print(json.dumps(doc))
    return EXIT_FAILURE if failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
