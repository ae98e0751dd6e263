"""model_new.py for a problem imported from a KernelBench file: class ModelNew, the file's Model
with forward replaced by the exported custom op.

ModelNew subclasses the original Model (loaded from original_model.py, the file copied beside
it), so its constructor signature, parameters, buffers and their initialization order are
Model's own: seeded the same way, ModelNew(*get_init_inputs()) holds Model(*get_init_inputs())'s
weights and load_state_dict works both ways. What feeds each input of the op (feed_plan.py: a
forward() argument, an argument Model draws itself, an attribute, a constant folded from
buffers, a constant forward() makes) is found the way the importer found it: the file is
traced again and its spec must match the exported one.

Per call, ModelNew reads its parameters and buffers through their modules' dicts (a table
made by its constructor: torch.compile traces it where it cannot trace an nn.LSTM's attributes)
and reuses the views the op takes (a BatchNorm weight [C] as [1, C, 1, 1]) and the constants,
computed once per device and state: the cache is checked by the tensors' identity (and folded
constants' buffers' versions) and dropped by .to() / .cuda() (Module._apply). Under
torch.compile the feeds are computed in the graph."""
import inspect
import os

from kforge_py.export import fold_source
from kforge_py.export.feed_plan import Mismatch, _holder, plan  # noqa: F401 - Mismatch: write_package
from kforge_py.export.write_package import packed

CONSTANTS_FILE = "constants.pt"


def _shape_list(shape):
    return repr([int(s) for s in shape])


def _draw_line(d, device_expr):
    dtype = str(d.dtype)
    if d.like:
        return f"torch.{d.func}({d.like}, dtype={dtype})"
    dev = {"input": device_expr, None: None}.get(d.device, repr(d.device))
    size = repr(tuple(d.size))
    parts = [repr(a) for a in d.args] + [size, f"dtype={dtype}"]
    if dev is not None:
        parts.append(f"device={dev}")
    call = f"torch.{d.func}({', '.join(parts)})"
    # Model drew on torch's default device; the op takes the inputs' device
    return call if d.device == "input" else f"{call}.to({device_expr})"


def forward_source(p, op, out_shapes, outputs):
    """ModelNew.forward: arguments, scalar checks, draws, the op call, the outputs."""
    names = [n for n, _, _ in p.params]
    if p.named:
        sig = ", ".join(n if d is inspect.Parameter.empty else f"{n}={d!r}"
                        for n, d, _ in p.params)
        arg = lambda i: names[i]  # noqa: E731
    else:
        sig = "*args"
        arg = lambda i: f"args[{i}]"  # noqa: E731
    tensor_args = [f.position for f in p.feeds if f.kind == "arg"]
    device = f"{arg(tensor_args[0])}.device" if tensor_args else \
        "torch.device('cuda', torch.cuda.current_device())"
    body = [f"_dev = {device}"]
    for i, v in sorted(p.scalars.items()):  # numbers the spec baked in: a cheap check
        body += [f"if {arg(i)} != {v!r}:",
                 f"    raise ValueError('ModelNew: argument {names[i] if p.named else i} "
                 f"is ' + repr({arg(i)}) + '; the exported program was built for {v!r}')"]
    for d in p.draws:
        body += [f"if {d.param} is None:  # drawn as Model draws it (the same RNG call)",
                 f"    {d.param} = {_draw_line(d, '_dev')}"]
    body.append("s = _state(self, _dev)")
    call, k = [], 0
    for f in p.feeds:
        if f.kind in ("arg", "drawn"):
            call.append(arg(f.position))
        else:
            call.append(f"s[{k}]")
            k += 1
    if packed(len(call)):  # one list argument (write_package.MAX_SCHEMA_ARGS)
        body.append(f"out = torch.ops.kforge.{op}([" + ", ".join(call) + "])")
    else:
        body.append(f"out = torch.ops.kforge.{op}(" + ", ".join(call) + ")")
    if out_shapes is not None and len(out_shapes) != len(outputs):
        out_shapes = None
    if len(outputs) == 1:
        same = out_shapes is None or tuple(out_shapes[0]) == tuple(outputs[0]["shape"])
        body.append("return out" if same else f"return out.reshape({_shape_list(out_shapes[0])})")
    else:
        parts = []
        for i, o in enumerate(outputs):
            same = out_shapes is None or tuple(out_shapes[i]) == tuple(o["shape"])
            parts.append(f"out[{i}]" if same else f"out[{i}].reshape({_shape_list(out_shapes[i])})")
        body.append("return (" + ", ".join(parts) + ",)")
    return f"    def forward(self, {sig}):\n" + "".join(f"        {ln}\n" for ln in body)


def draw_missing_source(p):
    """draw_missing(*args): forward()'s arguments with those Model draws itself drawn alike
    (None where there are none), so that a harness can give Model, ModelNew, a compiled and a
    captured ModelNew the same draws (bench/export/harness.py)."""
    if not p.draws:
        return "draw_missing = None  # Model draws none of its arguments\n"
    names = [n for n, _, _ in p.params]
    first = next(f.position for f in p.feeds if f.kind == "arg")
    lines = [f"a = list(args) + [None] * ({len(names)} - len(args))",
             f"_dev = a[{first}].device"]
    for d in p.draws:
        i = names.index(d.param)
        like = d.like and f"a[{names.index(d.like)}]"
        line = _draw_line(d, "_dev")
        if like:
            line = line.replace(f"({d.like},", f"({like},")
        lines += [f"if a[{i}] is None:", f"    a[{i}] = {line}"]
    lines.append("return a")
    return "def draw_missing(*args):\n" + "".join(f"    {ln}\n" for ln in lines)


def state_source(p):
    """_SOURCES (the attributes the op reads: owner module, dict, key) and _prepare(t,
    device): the op's non-argument inputs in spec order from the sources t (views, folded
    constants, saved constants)."""
    sources, index = [], {}

    def source(path, holder=None):
        if path not in index:
            index[path] = len(sources)
            sources.append((path, holder))
        return f"t[{index[path]}]"

    roots, lines, made, helpers = {}, [], {}, []
    out = []
    for f in p.feeds:
        if f.kind == "attr":
            v = source(f.path, f.holder)
            if f.holder == "__dict__":
                v += ".to(device)"  # a plain tensor attribute: .cuda() does not move it
            out.append(v if tuple(f.attr_shape) == tuple(f.shape) else
                       f"{v}.view({_shape_list(f.shape)})")
        elif f.kind == "fold":
            var = f"fold_{len(roots)}"
            roots[var] = f.node
            out.append((var, f.shape))
        elif f.kind == "made":
            made[f.name] = f.value
            out.append(f"_MADE[{f.name!r}].to(device)")
    fold_leaves = []
    if roots:
        try:
            lines, helpers, leaves = fold_source.emit(roots, lambda path: source(
                path, _holder(p.loaded.model, path) or "_buffers"))
        except fold_source.CannotWrite as e:
            raise Mismatch(f"a constant folded from the model's buffers cannot be written as "
                           f"code: {e}") from e
        fold_leaves = [index[path] for path in leaves]
    items = []
    for v in out:
        if isinstance(v, tuple):
            var, shape = v
            items.append(f"{var}.reshape({_shape_list(shape)}).to(device).contiguous()")
        else:
            items.append(v)
    holders = []
    for path, holder in sources:
        owner, _, leaf = path.rpartition(".")
        holders.append((owner, holder or "_buffers", leaf))
    text = "_SOURCES = " + repr(tuple(holders)) + "\n"
    text += f"_FOLD_SOURCES = {tuple(fold_leaves)!r}  # sources a folded constant reads\n\n\n"
    text += "def _prepare(t, device):\n"
    text += "".join(f"    {ln}\n" for ln in lines)
    text += "    return (" + "".join(f"{i}, " for i in items) + ")\n"
    identity = items == [f"t[{i}]" for i in range(len(sources))]
    return text, helpers, made, identity


STATE_CACHE = '''
def _state(m, device):
    """The op's inputs that are not forward() arguments, for module m on device."""
    t = [d[k] for d, k in m._kforge_table]
    if torch.compiler.is_compiling():  # the graph computes them once
        return _prepare(t, device)
    versions = tuple(t[i]._version for i in _FOLD_SOURCES)
    c = m.__dict__.get("_kforge_cache")
    if (c is None or c[0] != id(m) or c[1] != device or c[3] != versions
            or not all(map(operator.is_, t, c[2]))):
        c = (id(m), device, t, versions, _prepare(t, device))
        m.__dict__["_kforge_cache"] = c
    return c[4]
'''


STATE_DIRECT = '''
def _state(m, device):
    """The op's inputs that are not forward() arguments: the parameters and buffers as held."""
    return [d[k] for d, k in m._kforge_table]
'''


def model_new_source(path, spec, package, op, manifest, out_dir, feed_plan=None):
    """(model_new.py's text, {name: tensor} of the constants it loads from constants.pt)."""
    p = feed_plan or plan(path, spec)
    outputs = [t for t in manifest["tensors"] if t["role"] == "output"]
    inputs = [t["name"] for t in manifest["tensors"] if t["role"] == "input"]
    if inputs != [f.name for f in p.feeds]:
        raise Mismatch(f"the exported op takes {inputs}, the spec {[f.name for f in p.feeds]}")
    state, helpers, made, identity = state_source(p)
    # every input a parameter or buffer as it is (kb_04's LayerNorm): no views, nothing cached
    cache = STATE_DIRECT if identity else STATE_CACHE
    forward = forward_source(p, op, p.out_shapes, outputs)
    made_load = (f"_MADE = torch.load(os.path.join(_HERE, {CONSTANTS_FILE!r}), "
                 "weights_only=True)  # constants forward() makes\n" if made else "")
    helper_text = "".join(h + "\n\n" for h in helpers)
    where = spec["description"].split(":")[0].replace("imported from KernelBench file ", "")
    text = f'''"""ModelNew for the KernelBench file {where}: Model with forward() calling the kforge-exported
custom op torch.ops.kforge.{op} (written by `kforge export`; export again instead of editing)."""
import importlib.util
import inspect
import operator
import os
import sys

import torch
import torch.nn as nn  # noqa: F401

# This folder; where the source is exec'd without a file (KernelBench's harness loads it as
# text): $KFORGE_EXPORT_DIR, else the folder it was exported to.
_HERE = (os.path.dirname(os.path.abspath(__file__)) if "__file__" in globals()
         else os.environ.get("KFORGE_EXPORT_DIR", {os.path.abspath(out_dir)!r}))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import {package}  # noqa: E402,F401  registers torch.ops.kforge.{op}

_spec = importlib.util.spec_from_file_location("kforge_original_{op}",
                                               os.path.join(_HERE, "original_model.py"))
_original = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_original)
Model = _original.Model
get_inputs = _original.get_inputs
get_init_inputs = _original.get_init_inputs
{made_load}

{helper_text}{state}
{cache}

{draw_missing_source(p)}

class ModelNew(Model):
    """The original Model (constructor, parameters, buffers, init order unchanged) whose
    forward runs torch.ops.kforge.{op}. It reads its parameters and buffers through the dicts
    of the submodules it was built with (a parameter may be replaced or loaded; a submodule
    replaced after construction is not seen)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.__dict__["_kforge_table"] = [(getattr(self.get_submodule(o), d), k)
                                          for o, d, k in _SOURCES]

{forward}
    def _apply(self, fn, *args, **kwargs):  # .to() / .cuda() / .half(): the cached views go
        self.__dict__.pop("_kforge_cache", None)
        return super()._apply(fn, *args, **kwargs)


ModelNew.__init__.__signature__ = inspect.signature(Model.__init__)
'''
    return text, made


def write_constants(made, out_dir):
    if made:
        import torch
        torch.save(made, os.path.join(out_dir, CONSTANTS_FILE))
