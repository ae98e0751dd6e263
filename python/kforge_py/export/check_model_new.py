"""ModelNew checked on the CPU, without a GPU: an exported folder's model_new.py run with its op
replaced by a CPU stand-in, against the original Model and the importer's own values.

The stand-in registers torch.ops.kforge.<op> (once per process and op) and does what the
package's op does up to the launch: it holds the call to the package's own check
(_kforge_op.Program.check, on meta copies of the arguments: count, dtypes, shapes, contiguity),
records the arguments, and returns outputs from `compute` (zeros by default; interpret() gives
the spec's fp64 interpreter, `kforge interpret`). check() then asks:

  state    ModelNew(*get_init_inputs()) and Model(*get_init_inputs()), each after
           torch.manual_seed(0): the same state_dict (names, order, shapes, values)
  feeds    ModelNew(*get_inputs()) after torch.manual_seed(1), as kforge_py.kernelbench.load
           draws the importer's inputs: the op gets, in the spec's order, exactly the tensors
           the importer fed its check (spec_build.feeds: the forward() arguments, the draws
           Model made for the arguments it draws itself, the parameters as viewed, folded
           and made constants), same dtype, shape and values (torch.equal)
  outputs  with compute=interpret(...): ModelNew's outputs (the spec interpreted in fp64 on
           what ModelNew fed) against Model's own, each seeded alike, within the spec's
           tolerance

stage() writes what check() needs for a spec that `kforge export` cannot export (a Level 3
network the planner does not plan yet): the manifest as the C++ side writes it
(runtime/package.cpp manifest_of: the spec's inputs in order, then its outputs, concrete
shapes), the op runtime, model_new.py and its constants."""
import importlib.util
import json
import os
import shutil
import sys
import types

import torch

from kforge_py import kernelbench, spec_build
from kforge_py.export import feed_plan
from kforge_py.export import model_new as mn
from kforge_py.fx_shape import resolve_dims
from kforge_py.export.write_package import arg_name, packed, schema_of

HERE = os.path.dirname(os.path.abspath(__file__))
_ACTIVE = {}  # op -> the StandIn its registered op calls


class StandIn:
    def __init__(self, out_dir, compute=None):
        self.dir = out_dir
        self.package = next(d for d in sorted(os.listdir(out_dir)) if d.startswith("kforge_")
                            and os.path.isdir(os.path.join(out_dir, d)))
        self.op = self.package[len("kforge_"):]
        spec = importlib.util.spec_from_file_location(
            f"_kforge_op_check_{self.op}", os.path.join(out_dir, self.package, "_kforge_op.py"))
        runtime = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(runtime)
        self.program = runtime.Program(os.path.join(out_dir, self.package), self.op)
        self.compute = compute
        self.calls = []
        _register(self)

    def __call__(self, args):
        self.program.check([x.to("meta") for x in args], fake=True)
        self.calls.append([x.detach().clone() for x in args])
        if self.compute is not None:
            return self.compute(args, self.program)
        return [torch.zeros(d.shape, dtype=d.dtype) for d in self.program.outputs]

    def load(self):
        """model_new.py's namespace, its `import <package>` answered by a stub (the real
        package would register the real op under the same name)."""
        sys.modules.setdefault(self.package, types.ModuleType(self.package))
        path = os.path.join(self.dir, "model_new.py")
        ns = {"__file__": path, "__name__": f"model_new_{self.op}"}
        with open(path, encoding="utf-8") as f:
            exec(compile(f.read(), path, "exec"), ns)  # noqa: S102 - the exported file
        return ns


def _register(standin):
    op = standin.op
    first = op not in _ACTIVE
    _ACTIVE[op] = standin
    if not first:
        return
    p = standin.program
    taken = set()
    names = [arg_name(d.name, taken) for d in p.inputs]
    outs = p.outputs

    one_list = packed(len(names))

    def body(*args):
        res = _ACTIVE[op](list(args[0] if one_list else args))
        return res[0] if len(res) == 1 else tuple(res)

    def fake(*args):
        device = (args[0][0] if one_list else args[0]).device
        res = [torch.empty(d.shape, dtype=d.dtype, device=device) for d in outs]
        return res[0] if len(res) == 1 else tuple(res)

    torch.library.custom_op(f"kforge::{op}", body, mutates_args=(),
                            schema=schema_of(names, outs)).register_fake(fake)


def interpret(kforge, spec_path, workdir):
    """compute(args, program) for a StandIn: the spec's outputs by `kforge interpret` (fp64) on args."""
    from kforge_py.import_check import interpret as run
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)

    def compute(args, program):
        feed = dict(zip(spec["inputs"], args))
        outs, err = run(kforge, spec_path, None, feed, workdir)
        if err:
            raise RuntimeError(f"kforge interpret: {err}")
        return [torch.from_numpy(outs[d.name]["data"]).reshape(d.shape).to(d.dtype)
                for d in program.outputs]
    return compute


def _manifest(spec):
    """runtime.json's tensors for `spec` (runtime/package.cpp manifest_of): every dim in numbers,
    a derived dim's expression valued."""
    dims = resolve_dims(spec["dims"])
    tensors = [{"name": n, "dtype": t["dtype"],
                "shape": list(feed_plan.concrete_shape(t["shape"], dims)), "role": "input"}
               for n, t in spec["inputs"].items()]
    return {"name": spec["name"], "arch": "sm_90a", "built": False,
            "dims": [[k, v] for k, v in dims.items()], "tensors": tensors}


def stage(spec, spec_path, kb_file, out_dir, feed_plan=None):
    """An export folder for check() without the C++ side: spec.json, the manifest (the outputs'
    shapes and dtypes are Model's own: `kforge` is not run), _kforge_op.py, model_new.py,
    original_model.py, constants.pt."""
    package = "kforge_" + spec["name"]
    prog = os.path.join(out_dir, package, "program")
    os.makedirs(prog, exist_ok=True)
    shutil.copyfile(spec_path, os.path.join(out_dir, "spec.json"))
    shutil.copyfile(os.path.join(HERE, "op_runtime.py"),
                    os.path.join(out_dir, package, "_kforge_op.py"))
    manifest = _manifest(spec)
    p = feed_plan or mn.plan(kb_file, spec)
    if p.out_shapes is None:  # Model's forward does not run on the meta device: for real
        with torch.no_grad():
            real = p.real or kernelbench.load(kb_file)
            outs = _outputs(real.model(*real.inputs))
        p.out_shapes, p.out_dtypes = [tuple(o.shape) for o in outs], [o.dtype for o in outs]
    if len(p.out_shapes) != len(spec["outputs"]):
        raise mn.Mismatch(f"Model returns {len(p.out_shapes)} tensors, the spec "
                          f"{len(spec['outputs'])}")
    from kforge_py.fx_types import DTYPES as NAMES
    for n, s, dt in zip(spec["outputs"], p.out_shapes, p.out_dtypes):
        manifest["tensors"].append({"name": n, "dtype": NAMES[dt], "shape": list(s),
                                    "role": "output"})
    with open(os.path.join(prog, "runtime.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f)
    text, made = mn.model_new_source(kb_file, spec, package, spec["name"], manifest, out_dir,
                                     feed_plan=p)
    with open(os.path.join(out_dir, "model_new.py"), "w", encoding="utf-8") as f:
        f.write(text)
    shutil.copyfile(kb_file, os.path.join(out_dir, "original_model.py"))
    mn.write_constants(made, out_dir)
    return out_dir


def _outputs(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


def check(out_dir, kb_file, compute=None, reference=None):
    """A list of problems (empty: ModelNew passed), and the StandIn. `reference`: (loaded,
    conv) of the file at its own sizes on real tensors, where the caller has them."""
    standin = StandIn(out_dir, compute)
    ns = standin.load()
    Model, ModelNew = ns["Model"], ns["ModelNew"]
    problems = []
    torch.manual_seed(0)
    model = Model(*ns["get_init_inputs"]())
    torch.manual_seed(0)
    model_new = ModelNew(*ns["get_init_inputs"]())
    a, b = model.state_dict(), model_new.state_dict()
    if list(a) != list(b):
        problems.append(f"state_dict names differ: {list(a)} vs {list(b)}")
    for k in a:
        if k in b and (a[k].shape != b[k].shape or a[k].dtype != b[k].dtype
                       or not torch.equal(a[k], b[k])):
            problems.append(f"state_dict[{k}] differs (shape, dtype or seeded values)")
    with open(os.path.join(out_dir, "spec.json"), encoding="utf-8") as f:
        spec = json.load(f)
    loaded, conv = reference or _reference(kb_file, spec)
    ref = spec_build.feeds(loaded, conv)
    for mod in (model, model_new):  # as kernelbench.load sets a fresh Model up
        mod.eval()
        for m in mod.modules():
            if isinstance(m, torch.nn.modules.batchnorm._NormBase):
                m.train()
    with torch.no_grad():
        torch.manual_seed(1)
        got = _outputs(model_new(*ns["get_inputs"]()))
        torch.manual_seed(1)
        want = _outputs(model(*ns["get_inputs"]())) if compute is not None else None
    if len(standin.calls) != 1:
        return problems + [f"ModelNew made {len(standin.calls)} op calls, not 1"], standin
    args = standin.calls[0]
    decls = standin.program.inputs
    if len(args) != len(decls):
        problems.append(f"the op got {len(args)} inputs, its manifest has {len(decls)}")
    for x, d in zip(args, decls):
        r = ref[d.name]
        if x.dtype != d.dtype or tuple(x.shape) != d.shape:
            problems.append(f"input {d.name}: {x.dtype} {list(x.shape)}, the op takes "
                            f"{d.dtype} {list(d.shape)}")
        elif r.dtype != x.dtype or tuple(r.shape) != tuple(x.shape) or not torch.equal(
                r.reshape(x.shape), x):
            problems.append(f"input {d.name}: not what the importer fed (max |diff| "
                            f"{_diff(r, x)})")
    if want is not None:
        atol, rtol = spec_build.tolerance(spec)
        for i, (w, g) in enumerate(zip(want, got)):
            if w.shape != g.shape or not torch.allclose(g.double(), w.double(), atol=atol,
                                                        rtol=rtol):
                problems.append(f"output {i}: ModelNew's differs from Model's (max |diff| "
                                f"{_diff(w, g)})")
    return problems, standin


def _diff(a, b):
    try:
        return f"{float((a.double().reshape(-1) - b.double().reshape(-1)).abs().max()):.3g}"
    except Exception:  # noqa: BLE001 - shapes differ
        return "n/a"


def _reference(kb_file, spec):
    """(the file loaded on real tensors as the importer loads it, its Converter traced as the
    importer traced it)."""
    from kforge_py.import_kernelbench import load_for_tracing
    traced, _ = load_for_tracing(kb_file)
    _, conv = spec_build.build(traced, spec["name"], "", spec["precision"]["policy"])
    return kernelbench.load(kb_file), conv


def main(argv=None):
    """python -m kforge_py.export.check_model_new EXPORT_DIR KB_FILE: exit 0 or 1, problems."""
    argv = sys.argv[1:] if argv is None else argv
    problems, _ = check(argv[0], argv[1])
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
