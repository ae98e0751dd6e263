"""model_new.py for a problem imported from a KernelBench file: class ModelNew, the file's Model
with forward replaced by the exported custom op.

ModelNew subclasses the original Model (loaded from original_model.py, the file copied beside
it), so its constructor signature, parameters, buffers and their initialization order are
Model's own: seeded the same way, ModelNew(*get_init_inputs()) holds Model(*get_init_inputs())'s
weights and load_state_dict works both ways. Which forward() argument or which attribute feeds
each input of the exported op is found the way the importer found it: the file is traced again
(on the meta device) and its spec must match the exported one."""
import os

from kforge_py import kernelbench, spec_build
from kforge_py.fx_import import Unsupported


class Mismatch(Exception):
    """The KernelBench file does not give the exported spec."""


def feeds_of(path, spec):
    """(forward-argument feeds, attribute feeds, output shapes of Model's forward) for `spec`:
    {spec input: argument position}, {spec input: (attribute path, shape)}, [shape, ...] or
    None where Model's forward cannot run on the meta device."""
    import torch
    try:
        loaded = kernelbench.load(path, meta=True)
        rebuilt, conv = spec_build.build(loaded, spec["name"], "", spec["precision"]["policy"])
    except (kernelbench.KernelBenchError, Unsupported) as e:
        raise Mismatch(f"cannot trace it again: {e}") from e
    if not spec_build.same_structure(rebuilt, spec) or rebuilt["dims"] != spec["dims"]:
        raise Mismatch(f"it does not give the exported spec {spec['name']} (was it edited since "
                       "the import?)")
    try:
        with kernelbench._OnMeta(), torch.no_grad():
            out = loaded.model(*loaded.inputs)
        outs = out if isinstance(out, (tuple, list)) else [out]
        shapes = [list(o.shape) for o in outs]
    except Exception:  # noqa: BLE001 - the shapes are a convenience; the op's own shapes stand
        shapes = None
    return ({n: conv.placeholder_pos[n] for n in conv.placeholders},
            {n: (p, list(s)) for n, (p, s) in conv.params.items()}, shapes)


def attribute_expr(path):
    """"linear.weight" -> "self.linear.weight"; a part that is no identifier ("layers.0") is
    reached with getattr, which torch.compile traces as plainly as attribute access."""
    expr = "self"
    for part in path.split("."):
        expr = f"{expr}.{part}" if part.isidentifier() else f"getattr({expr}, {part!r})"
    return expr


def model_new_source(path, spec, package, op, manifest, out_dir):
    args, attrs, out_shapes = feeds_of(path, spec)
    inputs = [t for t in manifest["tensors"] if t["role"] == "input"]
    outputs = [t for t in manifest["tensors"] if t["role"] == "output"]
    feeds = []
    for t in inputs:
        n = t["name"]
        if n in args:
            feeds.append(f"args[{args[n]}]")
        elif n in attrs:
            attr, shape = attrs[n]
            feeds.append(f"{attribute_expr(attr)}.reshape({shape})")
        else:
            raise Mismatch(f"the exported op's input {n} is neither an argument of "
                           "Model.forward nor one of its attributes")
    if out_shapes is not None and len(out_shapes) != len(outputs):
        out_shapes = None
    if len(outputs) == 1:
        shape = out_shapes[0] if out_shapes else None
        ret = "out" if shape is None else f"out.reshape({shape})"
    else:
        ret = "tuple(" + ("out" if out_shapes is None else
                          "o.reshape(s) for o, s in zip(out, " + repr(out_shapes) + ")") + ")"
    feed_lines = "".join(f"            {f},\n" for f in feeds)
    return f'''"""ModelNew for the KernelBench file {spec["description"].split(":")[0].replace(
        "imported from KernelBench file ", "")}: Model with forward() calling the kforge-exported
custom op torch.ops.kforge.{op} (written by `kforge export`; export again instead of editing)."""
import importlib.util
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


class ModelNew(Model):
    """The original Model (constructor, parameters, buffers, init order unchanged) whose
    forward runs torch.ops.kforge.{op}."""

    def forward(self, *args):
        out = torch.ops.kforge.{op}(
{feed_lines}        )
        return {ret}
'''
