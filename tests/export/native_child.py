"""One process of test_native_op.py: imports exported packages (their folders are argv[1:]) under
the environment the test set (KFORGE_TORCH_EXT, PYTHONPATH, ...), exercises their ops without a
GPU and prints what it saw as one JSON line: which path registered the op (the dispatcher's
own registration dump), the warnings of the imports, opcheck on meta tensors, torch.compile
(fullgraph) over meta tensors, autograd, and for each bad call the op's error next to the Python
check's (Program.check) for the same arguments.

  native_child.py [--full] [--reasons] FOLDER...
--full adds opcheck, torch.compile and autograd (the first package only: seconds each);
--reasons then asks the package's loader (_kforge_native.extension) again under each
KFORGE_TORCH_EXT / CXX variant of REASONS, its process state reset, for the reason it says."""
import ctypes
import glob
import importlib
import json
import os
import sys
import warnings

import torch


def error_of(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the test compares types and words
        return [type(e).__name__, str(e).split("\n")[0]]
    return None


def bad_calls(prog):
    """(what, args) calls that must fail the same way on both paths: CPU tensors reach the op's
    CPU kernel (the C++ one on the compiled path), which checks before anything else."""
    cpu = [torch.zeros(d.shape, dtype=d.dtype) for d in prog.inputs]
    first = prog.inputs[0]
    other = torch.float64 if first.dtype != torch.float64 else torch.float32
    calls = [("cpu", cpu)]
    calls.append(("dtype", [torch.zeros(first.shape, dtype=other)] + cpu[1:]))
    calls.append(("shape", [torch.zeros([s + 1 for s in first.shape] or [2], dtype=first.dtype)]
                  + cpu[1:]))
    last = prog.inputs[-1]
    calls.append(("last_shape", cpu[:-1] + [torch.zeros([3], dtype=last.dtype)]))
    return calls


def observe(folder, full):
    pkg = [d for d in os.listdir(folder) if d.startswith("kforge_")][0]
    sys.path.insert(0, folder)
    mod = importlib.import_module(pkg)
    prog, op = mod.PROGRAM, mod.op
    qual = f"kforge::{pkg[len('kforge_'):]}"
    dump = torch._C._dispatch_dump(qual)
    keys = {}
    for line in dump.splitlines():
        for key in ("CPU", "CUDA", "Meta", "Autograd[alias]", "CompositeExplicitAutograd[alias]"):
            if line.startswith(key + ":"):
                keys[key] = os.path.basename(line.split("registered at ")[1].split(":")[0])
    meta = [torch.empty(d.shape, dtype=d.dtype, device="meta") for d in prog.inputs]
    res = {"package": pkg, "native": getattr(mod.NATIVE, "__file__", None), "keys": keys}
    res["bad"] = {what: {"op": error_of(lambda: op(*args)),
                         "check": error_of(lambda: prog.check(args, fake=False))}
                  for what, args in bad_calls(prog)}
    # the callback the C++ kernel calls on a device's first call: on a --no-build package the
    # real Program.native_entry refuses, and the callback hands back its words as RuntimeError
    native = importlib.import_module(pkg + "._kforge_native")
    cb = native.entry_callback(prog.native_entry)
    entry, buf = native.Entry(), ctypes.create_string_buffer(512)
    rc = cb(0, ctypes.pointer(entry), ctypes.cast(buf, ctypes.c_void_p), len(buf))
    res["entry_callback"] = [rc, buf.value.decode()]
    if not full:
        return res
    res["opcheck"] = error_of(lambda: torch.library.opcheck(op, meta))
    outs = op(*meta)
    outs = outs if isinstance(outs, tuple) else (outs,)
    res["meta_shapes"] = [list(o.shape) for o in outs]
    res["expected_shapes"] = [list(d.shape) for d in prog.outputs]
    compiled = torch.compile(lambda *a: op(*a), fullgraph=True, backend="aot_eager")
    res["compile"] = error_of(lambda: compiled(*meta))
    grad = [t.clone().requires_grad_(t.dtype.is_floating_point) for t in meta]
    g_out = op(*grad)
    g_out = g_out[0] if isinstance(g_out, tuple) else g_out
    res["grad_out_requires_grad"] = bool(g_out.requires_grad)
    res["backward"] = (error_of(lambda: g_out.sum().backward()) if g_out.requires_grad
                       else None)
    return res


REASONS = [{"KFORGE_TORCH_EXT": "prebuilt"},
           {"KFORGE_TORCH_EXT": "build", "CXX": "/nonexistent/c++"},
           {"KFORGE_TORCH_EXT": "sideways"}]


def reasons(folder):
    """The loader's reason under each variant (sys.path without an importable kforge_torch)."""
    pkg = [d for d in os.listdir(folder) if d.startswith("kforge_")][0]
    native = importlib.import_module(pkg + "._kforge_native")
    sys.path[:] = [p for p in sys.path if not glob.glob(os.path.join(p, "kforge_torch*"))]
    importlib.invalidate_caches()
    said = []
    for env in REASONS:
        os.environ.update(env)
        del sys.modules[native.STATE_MODULE]
        sys.modules.pop("kforge_torch", None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            mod = native.extension(os.path.join(folder, pkg))
        said.append([mod is None] + [str(w.message) for w in caught])
    return said


def main():
    args = sys.argv[1:]
    full, want_reasons = "--full" in args, "--reasons" in args
    folders = [a for a in args if not a.startswith("--")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = [observe(folder, full and i == 0) for i, folder in enumerate(folders)]
    said = [str(w.message) for w in caught if "kforge_torch" in str(w.message)]
    out = {"results": results, "warnings": said}
    if want_reasons:
        out["reasons"] = reasons(folders[0])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
