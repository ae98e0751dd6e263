"""`kforge import kernelbench FILE...`: KernelBench-format modules -> kforge problem specs.

For each file: load it, trace Model with torch.fx, map every node onto spec ops, write
DIR/<name>.json, then validate it: `kforge check` on the spec, and the problem's fp64
interpreter (`kforge interpret`) against the PyTorch module (run in fp64) on the same random
inputs, at smaller sizes where the file's size variables allow (dims are named after them).
Problems whose output is constant, or does not depend on the inputs, are flagged as degenerate.
A file that fails does not stop the batch; the exit code is 1 if any failed or was flagged.

usage: python -m kforge_py.import_kernelbench --kforge KFORGE FILE... [-o DIR]
           [--policy P] [--atol X] [--rtol Y] [--allow-degenerate]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from kforge_py import EXIT_ENVIRONMENT, EXIT_FAILURE, EXIT_OK

CHECK_RTOL = 1e-6   # fp64 PyTorch vs fp64 interpreter: only summation order differs
CHECK_ATOL = 1e-8
INTERPRET_TIMEOUT_S = 120


class ImportFailed(Exception):
    pass


def shrink_plans(literal_ints):
    """Override sets that make the file's large size variables small: distinct values above 32
    map to distinct multiples of 16 (then of 32), in order, never to a value that a small
    variable already holds (so dims named by value stay distinct)."""
    kept = {v for v in literal_ints.values() if v <= 32}
    big = sorted({v for v in literal_ints.values() if v > 32})
    plans = []
    for step in (16, 32):
        small, cand = {}, step
        for v in big:
            while cand in kept:
                cand += step
            small[v] = min(v, cand)
            cand += step
        plan = {k: small[v] for k, v in literal_ints.items() if v in small}
        if plan and plan not in plans:
            plans.append(plan)
    return plans


def to_lists(feed):
    import torch
    return {n: t.detach().to(torch.float64).reshape(-1).tolist() for n, t in feed.items()}


def torch_outputs(loaded, feed_inputs):
    """The module's outputs in fp64 (a copy of the model; float inputs cast to fp64)."""
    import copy
    import torch
    model = copy.deepcopy(loaded.model).double()
    args = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
            for x in feed_inputs]
    with torch.no_grad():
        out = model(*args)
    return list(out) if isinstance(out, (list, tuple)) else [out]


def run_kforge(kforge, args, timeout=60):
    r = subprocess.run([kforge] + args, capture_output=True, text=True, timeout=timeout)
    return r.returncode, (r.stderr.strip() or r.stdout.strip())


def interpret(kforge, spec_path, dims, feed, workdir):
    in_path, out_path = os.path.join(workdir, "in.json"), os.path.join(workdir, "out.json")
    with open(in_path, "w") as f:
        json.dump(to_lists(feed), f)
    args = ["interpret", spec_path, "--inputs", in_path, "-o", out_path]
    if dims:
        args += ["--dims", ",".join(f"{k}={v}" for k, v in dims.items())]
    try:
        rc, msg = run_kforge(kforge, args, INTERPRET_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, f"the interpreter took over {INTERPRET_TIMEOUT_S} s"
    if rc != 0:
        return None, msg
    with open(out_path) as f:
        return json.load(f)["outputs"], None


def compare(spec, ref_outputs, interp):
    import numpy as np
    worst = 0.0
    for name, ref in zip(spec["outputs"], ref_outputs):
        got = interp[name]
        data = np.array([float(x) for x in got["data"]], dtype=np.float64)
        r = ref.detach().double().reshape(-1).numpy()
        if list(ref.shape) != got["shape"]:
            raise ImportFailed(f"output {name}: PyTorch gives shape {list(ref.shape)}, "
                               f"the spec gives {got['shape']}")
        if not np.allclose(data, r, rtol=CHECK_RTOL, atol=CHECK_ATOL, equal_nan=True):
            bad = np.nanmax(np.abs(data - r))
            raise ImportFailed(f"output {name}: the spec's interpreter and PyTorch differ "
                               f"(max |diff| {bad:.3g}); the import is wrong")
        finite = np.isfinite(r) & np.isfinite(data)
        if finite.any():
            worst = max(worst, float(np.max(np.abs(data[finite] - r[finite]))))
    return worst


def degenerate(spec, loaded, seed_a=101, seed_b=202):
    """A message if the module's output is constant or independent of its inputs."""
    import numpy as np
    from kforge_py.kernelbench import draw_inputs
    from kforge_py.spec_build import tolerance
    atol, rtol = tolerance(spec)
    outs_a = torch_outputs(loaded, draw_inputs(loaded, seed_a))
    outs_b = torch_outputs(loaded, draw_inputs(loaded, seed_b))
    for name, a, b in zip(spec["outputs"], outs_a, outs_b):
        a, b = a.reshape(-1).numpy(), b.reshape(-1).numpy()
        if a.size > 1 and np.ptp(a) <= atol + rtol * np.max(np.abs(a)):
            return f"output {name} is constant ({a[0]:.6g} everywhere)"
        if np.allclose(a, b, atol=atol, rtol=rtol, equal_nan=True):
            return f"output {name} does not depend on the inputs (same for two random draws)"
    return None


def validate(kforge, spec, spec_path, loaded, path):
    """Numeric check at the smallest instance of the file that has the same structure.
    Returns a line describing what was checked."""
    from kforge_py import kernelbench, spec_build
    with tempfile.TemporaryDirectory(prefix="kforge-import-") as work:
        for plan in shrink_plans(loaded.literal_ints) + [None]:
            dims = None
            target, tconv = loaded, None
            if plan is not None:
                try:
                    small = kernelbench.load(path, overrides=plan)
                    sspec, sconv = spec_build.build(small, spec["name"], "")
                except Exception:
                    continue
                if not spec_build.same_structure(spec, sspec):
                    continue
                dims, target, tconv = sspec["dims"], small, sconv
            if tconv is None:
                _, tconv = spec_build.build(target, spec["name"], "")
            feed = spec_build.feeds(target, tconv)
            interp, err = interpret(kforge, spec_path, dims, feed, work)
            if interp is None:
                if plan is not None:
                    continue
                return None, f"not checked numerically: {err}"
            ref = torch_outputs(target, list(target.inputs))
            worst = compare(spec, ref, interp)
            where = ",".join(f"{k}={v}" for k, v in (dims or spec["dims"]).items())
            flag = degenerate(spec, target)
            return flag, (f"interpreter = PyTorch (fp64) at {where or 'the given shapes'}, "
                          f"max |diff| {worst:.2g}")
    return None, "not checked numerically"


def import_one(kforge, path, out_dir, args):
    from kforge_py import kernelbench, spec_build
    from kforge_py.fx_import import Unsupported
    stem = os.path.splitext(os.path.basename(path))[0]
    try:
        loaded = kernelbench.load(path)
        doc = (loaded.model.__doc__ or "").strip().splitlines()
        desc = f"imported from KernelBench file {os.path.basename(path)}"
        if doc and doc[0] and doc[0] != "Model":
            desc += ": " + doc[0]
        spec, _ = spec_build.build(loaded, spec_build.problem_name(stem), desc,
                                   args.policy, args.atol, args.rtol)
    except (kernelbench.KernelBenchError, Unsupported) as e:
        return False, str(e)
    out = os.path.join(out_dir, spec["name"] + ".json")
    with open(out, "w") as f:
        json.dump(spec, f, indent=2)
        f.write("\n")
    rc, msg = run_kforge(kforge, ["check", out])
    if rc != 0:
        return False, f"the written spec {out} does not check: {msg}"
    try:
        flag, line = validate(kforge, spec, out, loaded, path)
    except ImportFailed as e:
        return False, f"{e} (spec kept at {out} for inspection)"
    ops = len(spec["graph"])
    text = f"-> {out} ({ops} ops, policy {spec['precision']['policy']}); {line}"
    if flag:
        if args.allow_degenerate:
            return True, text + f"; degenerate: {flag}"
        return False, (f"degenerate problem: {flag} (spec written to {out}; a kernel that "
                       f"skips the work would pass its checks: --allow-degenerate imports it "
                       f"anyway)")
    return True, text


def main(argv=None):
    ap = argparse.ArgumentParser(prog="kforge import kernelbench")
    ap.add_argument("files", nargs="+")
    ap.add_argument("-o", "--out-dir", default=".")
    ap.add_argument("--kforge", required=True, help="the kforge binary (check, interpret)")
    ap.add_argument("--policy", choices=["fp32_strict", "tf32", "bf16", "fp16"])
    ap.add_argument("--atol", type=float)
    ap.add_argument("--rtol", type=float)
    ap.add_argument("--allow-degenerate", action="store_true")
    args = ap.parse_args(argv)
    try:
        import torch
    except ImportError as e:
        print(f"kforge import: PyTorch is not installed for {sys.executable} ({e}); run "
              "scripts/setup.sh or set KFORGE_PYTHON to a Python with torch", file=sys.stderr)
        return EXIT_ENVIRONMENT
    torch.set_num_threads(1)
    os.makedirs(args.out_dir, exist_ok=True)
    failed = 0
    for path in args.files:
        try:
            ok, msg = import_one(args.kforge, path, args.out_dir, args)
        except Exception as e:  # a bug of the importer on this file; the batch goes on
            ok, msg = False, (f"the importer failed ({type(e).__name__}: {e}); please report "
                              "this file")
        print(f"{'ok' if ok else 'FAILED'}: {path}: {msg}", flush=True)
        failed += not ok
    n = len(args.files)
    print(f"imported {n - failed} of {n} file(s)", flush=True)
    return EXIT_FAILURE if failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
