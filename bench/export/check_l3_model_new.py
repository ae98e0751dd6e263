#!/usr/bin/env python3
"""ModelNew for every KernelBench Level 3 file that imports, checked on the CPU (no GPU, no
kforge binary): for each file, in a child process of its own (memory, and one stand-in op per
process), the spec is built as `kforge import kernelbench` builds it (kforge_py.spec_build at
the file's own sizes), an export folder is staged without the C++ side
(kforge_py.export.check_model_new.stage: the manifest as runtime/package.cpp writes it,
model_new.py, its constants) and checked (check_model_new.check: ModelNew's state_dict equals
Model's seeded alike; ModelNew's op call, made on the CPU with the op replaced by a stand-in
holding the package's own call check, gets in the spec's order exactly the tensors the
importer fed its check - forward() arguments, the h0/c0 Model draws itself, parameters as
viewed, constants folded from buffers, constants forward() makes - same dtype, shape, values).
The fp64 interpreter is not run here (full-size networks take minutes in it); the fixtures of
tests/export/test_model_new_feeds.py check outputs end to end.

  check_l3_model_new.py KERNELBENCH_LEVEL3_DIR [NUMBER ...] > table.md
One row per file: feeds by kind, the sizes checked (a file of more than MAX_ELEMENTS elements
at a smaller binding of its literal sizes whose spec has the same structure, as the importer's
numeric check does), the check's verdict (or why the file has no spec / no ModelNew), seconds."""
import glob
import json
import multiprocessing as mp
import os
import sys
import tempfile
import time
import traceback

TIMEOUT_S = 600
# A file whose tensors (inputs, weights) hold more elements is checked at smaller sizes (each
# check holds about five copies of them: Model, ModelNew, the importer's load, the recorded
# call)
MAX_ELEMENTS = 1 << 25
MAX_ELEMENTS_FULL = int(os.environ.get("MAX_ELEMENTS_FULL", 1 << 28))  # no smaller binding: full size up to this


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))


def warm_up():
    """torch, kforge_py and torch.library imported once, before the forks: each child
    inherits them (seconds a file otherwise)."""
    import torch
    torch.set_num_threads(1)
    from kforge_py.export import check_model_new  # noqa: F401
    from kforge_py.import_kernelbench import warm_up as importer_warm_up
    importer_warm_up()
    torch.library.custom_op("kforge_warm_up::nop", lambda x: x.clone(), mutates_args=(),
                            schema="(Tensor x) -> Tensor")


def one(path, queue):
    import torch
    from kforge_py import kernelbench, spec_build
    from kforge_py.export import check_model_new as check
    from kforge_py.export import feed_plan
    from kforge_py.import_kernelbench import load_for_tracing
    row = {"file": os.path.basename(path)}
    t0 = time.time()
    try:
        stem = os.path.splitext(os.path.basename(path))[0]
        desc = f"imported from KernelBench file {os.path.basename(path)}"
        loaded, _ = load_for_tracing(path)
        spec, conv = spec_build.build(loaded, spec_build.problem_name(stem), desc)
        row["ops"] = len(spec["graph"])
        row["sizes"] = "full"
        small_dir = tempfile.TemporaryDirectory(prefix="kforge-l3-small-")
        count = kernelbench.element_count(loaded)
        if count > MAX_ELEMENTS:
            try:
                path, loaded, spec, conv, row["sizes"] = reduced(path, loaded, spec,
                                                                 small_dir.name)
            except RuntimeError:
                if count > MAX_ELEMENTS_FULL:
                    raise
                row["sizes"] = "full (no smaller binding keeps the spec's structure)"
        real = kernelbench.load(path)  # as the importer's check loads it (seeds 0 and 1)
        with tempfile.TemporaryDirectory(prefix="kforge-l3-check-") as d:
            spec_path = os.path.join(d, "spec.json")
            with open(spec_path, "w") as f:
                json.dump(spec, f)
            p = feed_plan.plan(path, spec, traced=(loaded, conv), real=real)
            out = check.stage(spec, spec_path, path, os.path.join(d, "export"), feed_plan=p)
            kinds = {}
            for fd in p.feeds:
                kinds[fd.kind] = kinds.get(fd.kind, 0) + 1
            row["feeds"] = kinds
            row["views"] = sum(1 for fd in p.feeds if fd.kind == "attr"
                               and tuple(fd.attr_shape) != tuple(fd.shape))
            problems, standin = check.check(out, path, reference=(real, conv))
            row["inputs"] = len(standin.calls[0]) if standin.calls else 0
            row["problems"] = problems
            row["ok"] = not problems
    except Exception as e:  # noqa: BLE001 - one file's failure is a row
        row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
        row["trace"] = traceback.format_exc()[-1500:]
    row["seconds"] = round(time.time() - t0, 1)
    queue.put(row)


def reduced(path, loaded, spec, work):
    """The file with its literal sizes re-bound smaller (the importer's shrink_plans), written
    to `work`, where its spec has the full-size spec's structure: (path, loaded, spec, conv,
    "reduced: ..."). Raises where no smaller binding keeps the structure."""
    import ast
    from kforge_py import kernelbench, spec_build
    from kforge_py.import_check import shrink_plans
    from kforge_py.import_kernelbench import load_for_tracing
    with open(path) as f:
        source = f.read()
    for plan in shrink_plans(loaded.literal_ints):
        small = os.path.join(work, os.path.basename(path))
        with open(small, "w") as f:
            f.write(ast.unparse(kernelbench._override(ast.parse(source), plan)))
        try:
            lo, _ = load_for_tracing(small)
            sp, conv = spec_build.build(lo, spec["name"], spec["description"])
        except Exception:  # noqa: BLE001 - this binding does not trace: the next one
            continue
        if spec_build.same_structure(sp, spec):
            return small, lo, sp, conv, "reduced: " + ",".join(f"{k}={v}" for k, v in plan.items())
    raise RuntimeError(f"{kernelbench.element_count(loaded):,} elements at the file's sizes "
                       "and no smaller binding of its sizes keeps the spec's structure")


def run(path):
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=one, args=(path, q))
    p.start()
    p.join(TIMEOUT_S)
    if p.is_alive():
        p.kill()
        p.join()
        return {"file": os.path.basename(path), "error": f"timed out after {TIMEOUT_S} s"}
    try:
        return q.get(timeout=5)
    except Exception:  # noqa: BLE001
        return {"file": os.path.basename(path), "error": f"the child exited {p.exitcode}"}


def main():
    root = sys.argv[1]
    only = set(sys.argv[2:])
    files = sorted(glob.glob(os.path.join(root, "*.py")),
                   key=lambda f: int(os.path.basename(f).split("_")[0]))
    files = [f for f in files if not only or os.path.basename(f).split("_")[0] in only]
    warm_up()
    rows = []
    print("| problem | ops | op inputs | feeds by kind | views | sizes | ModelNew (CPU check) | s |")
    print("|---|---|---|---|---|---|---|---|")
    for f in files:
        r = run(f)
        rows.append(r)
        feeds = ", ".join(f"{k} {v}" for k, v in sorted(r.get("feeds", {}).items()))
        if "error" in r:
            verdict = "no ModelNew: " + r["error"].replace("|", "/")
        elif r["ok"]:
            verdict = "ok"
        else:
            verdict = "FAIL: " + "; ".join(r["problems"])[:300].replace("|", "/")
        print(f"| {r['file'][:-3]} | {r.get('ops', '-')} | {r.get('inputs', '-')} | {feeds} | "
              f"{r.get('views', '-')} | {r.get('sizes', '-')} | {verdict} | "
              f"{r.get('seconds', '-')} |", flush=True)
        print(json.dumps(r), file=sys.stderr, flush=True)
    ok = sum(1 for r in rows if r.get("ok"))
    print(f"\n{ok} of {len(rows)} files: ModelNew checked ok on the CPU")
    return 0 if ok == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
