"""`kforge import kernelbench FILE...`: KernelBench-format modules -> kforge problem specs.

For each file: load it on the meta device (its tensors have shapes but no storage: a full-size
problem costs no memory), trace Model with torch.fx, map every node onto spec ops, write
DIR/<name>.json, then validate it: `kforge check` on the spec, and the problem's fp64
interpreter (`kforge interpret`) against the PyTorch module (run in fp64) on the same random
inputs, at reduced sizes where the file's size variables can be re-bound (import_check.py says
which sizes are used and when). Problems whose output is constant, or does not depend on the
inputs measurably above the precision policy's noise, are flagged as degenerate; where it
depends on them more weakly than the policy's tolerance, the tolerance written is tightened so
that a kernel writing a constant still fails (degeneracy.py).

The file is Python code and runs as such: each file is imported in a child process of its own
(isolate.py) with a wall-clock limit (--timeout-s) and an address-space limit (--max-memory-mb);
a file that hangs, exits, is killed or runs out of memory fails by name with the reason. A file
that fails does not stop the batch; the exit code is 1 if any failed or was flagged.

usage: python -m kforge_py.import_kernelbench --kforge KFORGE FILE... [-o DIR]
           [--policy P] [--atol X] [--rtol Y] [--allow-degenerate]
           [--timeout-s S] [--max-memory-mb M]
"""
import argparse
import json
import os
import sys

from kforge_py import EXIT_ENVIRONMENT, EXIT_FAILURE, EXIT_OK, isolate
from kforge_py.import_check import ImportFailed, run_kforge, shrink_plans, validate  # noqa: F401

DEFAULT_TIMEOUT_S = 300       # per file: loading, tracing, `kforge check` and the numeric check
DEFAULT_MAX_MEMORY_MB = 8192  # per file: the child's address space (PyTorch maps ~3.5 GB alone)


def load_for_tracing(path):
    """The file at its own sizes on the meta device, and a note: where the file's own code
    cannot run there (it reads a value of a tensor it made), on real tensors (bounded by the
    child's memory limit), said in the note."""
    from kforge_py import kernelbench
    try:
        return kernelbench.load(path, meta=True), ""
    except kernelbench.KernelBenchError as e:
        loaded = kernelbench.load(path)  # (raises the file's own error where this fails too)
        return loaded, f"; traced on real tensors (on the meta device, {e})"


def write_spec(spec, out):
    with open(out + ".tmp", "w") as f:
        json.dump(spec, f, indent=2)
        f.write("\n")
    os.replace(out + ".tmp", out)


def import_one(kforge, path, out_dir, args, report=lambda stage: None):
    """(ok, message) for one file. report(stage) says what it is doing: a dict with "doing"
    and, once the spec is written, "spec" (its path)."""
    from kforge_py import kernelbench, spec_build
    from kforge_py.fx_import import Unsupported
    stem = os.path.splitext(os.path.basename(path))[0]
    try:
        report({"doing": "running the file"})
        loaded, note = load_for_tracing(path)
        report({"doing": "tracing Model"})
        doc = (loaded.model.__doc__ or "").strip().splitlines()
        desc = f"imported from KernelBench file {os.path.basename(path)}"
        if doc and doc[0] and doc[0] != "Model":
            desc += ": " + doc[0]
        spec, conv = spec_build.build(loaded, spec_build.problem_name(stem), desc,
                                   args.policy, args.atol, args.rtol)
    except (kernelbench.KernelBenchError, Unsupported) as e:
        return False, str(e)
    out = os.path.join(out_dir, spec["name"] + ".json")
    write_spec(spec, out)
    report({"doing": "checking the spec", "spec": out})
    rc, msg = run_kforge(kforge, ["check", out])
    if rc != 0:
        return False, f"the written spec {out} does not check: {msg}"
    report({"doing": "checking numerically", "spec": out})
    precision = dict(spec["precision"])
    try:
        flag, line = validate(kforge, spec, out, loaded, path, conv)
    except ImportFailed as e:
        return False, f"{e} (spec kept at {out} for inspection)"
    if spec["precision"] != precision:  # tightened: the output depends on its inputs weakly
        write_spec(spec, out)
        rc, msg = run_kforge(kforge, ["check", out])
        if rc != 0:
            return False, f"the spec {out} with its tightened tolerance does not check: {msg}"
    ops = len(spec["graph"])
    text = f"-> {out} ({ops} ops, policy {spec['precision']['policy']}); {line}{note}"
    if flag:
        if args.allow_degenerate:
            return True, text + f"; degenerate: {flag}"
        return False, (f"degenerate problem: {flag} (spec written to {out}; a kernel that "
                       f"skips the work would pass its checks: --allow-degenerate imports it "
                       f"anyway)")
    return True, text


def warm_up():
    """PyTorch's one-time initializations that importing a file triggers (the meta device's
    kernels, torch.fx tracing, shape propagation), done once before the forks so that every
    child inherits them: about 3 s a file otherwise."""
    import torch
    from kforge_py import kernelbench, spec_build
    with kernelbench._OnMeta():
        model, x = torch.nn.Linear(4, 4).eval(), torch.randn(2, 4)
    spec_build.build(kernelbench.Loaded(model, [x]), "warm_up", "")
    with torch.no_grad():
        torch.nn.Linear(4, 4).double()(torch.randn(2, 4, dtype=torch.float64))


def import_isolated(path, args):
    """(ok, message) for one file, imported in a child process under the limits of `args`."""
    def work(report):
        try:
            return list(import_one(args.kforge, path, args.out_dir, args, report))
        except Exception as e:  # a bug of the importer on this file; the batch goes on
            return [False, f"the importer failed ({type(e).__name__}: {e}); please report "
                           "this file"]

    out = isolate.run_limited(work, args.timeout_s, args.max_memory_mb)
    if out.result is not None:
        ok, msg = out.result
    else:
        ok, stage = False, out.stage or {}
        msg = out.failure + (f" while {stage['doing']}" if stage.get("doing") else "")
        spec = stage.get("spec")
        if spec and os.path.exists(spec):  # written by this child, not checked: not kept
            os.unlink(spec)
            msg += f" (removed the unchecked spec {spec})"
    if not ok and any(s in msg for s in ("can't allocate memory", "MemoryError",
                                         "out of memory")):
        msg += (f" [the memory limit: --max-memory-mb {args.max_memory_mb} of address space, "
                f"of which the importer itself maps {args.own_mb} MB]")
    return ok, msg


def main(argv=None):
    ap = argparse.ArgumentParser(prog="kforge import kernelbench")
    ap.add_argument("files", nargs="+")
    ap.add_argument("-o", "--out-dir", default=".")
    ap.add_argument("--kforge", required=True, help="the kforge binary (check, interpret)")
    ap.add_argument("--policy", choices=["fp32_strict", "tf32", "bf16", "fp16"])
    ap.add_argument("--atol", type=float)
    ap.add_argument("--rtol", type=float)
    ap.add_argument("--allow-degenerate", action="store_true")
    ap.add_argument("--timeout-s", type=float, default=DEFAULT_TIMEOUT_S,
                    help=f"wall-clock limit per file (default {DEFAULT_TIMEOUT_S})")
    ap.add_argument("--max-memory-mb", type=int, default=DEFAULT_MAX_MEMORY_MB,
                    help=f"address-space limit per file (default {DEFAULT_MAX_MEMORY_MB})")
    args = ap.parse_args(argv)
    if args.timeout_s <= 0 or args.max_memory_mb <= 0:
        ap.error("--timeout-s and --max-memory-mb must be > 0")
    try:
        import torch
    except ImportError as e:
        print(f"kforge import: PyTorch is not installed for {sys.executable} ({e}); run "
              "scripts/setup.sh or set KFORGE_PYTHON to a Python with torch", file=sys.stderr)
        return EXIT_ENVIRONMENT
    torch.set_num_threads(1)
    warm_up()
    args.own_mb = isolate.address_space_mb()
    os.makedirs(args.out_dir, exist_ok=True)
    failed = 0
    for path in args.files:
        ok, msg = import_isolated(path, args)
        print(f"{'ok' if ok else 'FAILED'}: {path}: {msg}", flush=True)
        failed += not ok
    n = len(args.files)
    print(f"imported {n - failed} of {n} file(s)", flush=True)
    return EXIT_FAILURE if failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
