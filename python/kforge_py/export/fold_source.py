"""Python source for a constant the importer folded from a model's buffers (fx_fold): the fx
nodes that compute it (MinGPT's `self.bias[:, :, :T, :T] == 0`, the one-hot matrix of Swin's
constant relative-position index) written as straight-line statements that model_new.py runs on
the module's own buffers, so ModelNew computes the constant from its state as the importer did
(eval_folded), on the buffers' device, once per state (model_new caches it).

emit(roots, source_of) -> (statements, helpers): each root's value in the variable the caller
names; a get_attr leaf is the expression source_of(path) gives; call_function targets are
written by qualified name (torch.*, operator.*, builtins) or, for a kforge_py helper such as
fx_gather.one_hot_rows, by its own source copied into model_new.py (the package needs no
kforge_py). Anything else raises CannotWrite."""
import builtins
import inspect
import math
import operator

import torch
import torch.fx


class CannotWrite(Exception):
    """A folded constant that has no source form here (say which node)."""


def _is_node(a):
    return isinstance(a, torch.fx.Node) or type(a).__name__ == "FoldedCall"


def _qualified(target):
    """How model_new.py names a call_function target, and a helper's source or None."""
    if getattr(operator, getattr(target, "__name__", ""), None) is target:
        return f"operator.{target.__name__}", None
    if getattr(builtins, getattr(target, "__name__", ""), None) is target:
        return target.__name__, None
    module = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", None)
    if module.startswith("kforge_py.") and name and inspect.isfunction(target):
        return f"_fold_{name}", inspect.getsource(target).replace(f"def {name}(",
                                                                   f"def _fold_{name}(", 1)
    try:
        qual = torch.fx.node._get_qualified_name(target)
    except Exception:  # noqa: BLE001 - not a named function
        qual = None
    if qual and (qual.startswith("torch.") or qual.startswith("operator.")):
        return qual, None
    raise CannotWrite(f"the call {target!r} (module {module or '?'})")


def _literal(a, var):
    """The source of an argument: nodes by their variable, Python values by a form that
    evaluates to themselves."""
    if _is_node(a):
        return var(a)
    if a is None or isinstance(a, (bool, int, str)):
        return repr(a)
    if isinstance(a, float):
        if math.isinf(a):
            return "float('inf')" if a > 0 else "float('-inf')"
        if math.isnan(a):
            return "float('nan')"
        return repr(a)
    if a is Ellipsis:
        return "..."
    if isinstance(a, slice):
        return f"slice({_literal(a.start, var)}, {_literal(a.stop, var)}, {_literal(a.step, var)})"
    if isinstance(a, tuple):
        inner = ", ".join(_literal(x, var) for x in a)
        return f"({inner},)" if len(a) == 1 else f"({inner})"
    if isinstance(a, list):
        return "[" + ", ".join(_literal(x, var) for x in a) + "]"
    if isinstance(a, (torch.dtype, torch.memory_format, torch.layout)):
        return str(a)
    if isinstance(a, torch.device):  # the device traced (an input's): the call's device
        return "device"
    if isinstance(a, torch.Size):
        return f"torch.Size({_literal(tuple(a), var)})"
    raise CannotWrite(f"the argument {a!r} ({type(a).__name__})")


def emit(roots, source_of, prefix="_f"):
    """roots: {variable: folded node}. Returns (statements, helper sources, leaf paths in first
    use order); each statement a line `var = expr`."""
    names, lines, helpers, leaves = {}, [], {}, []

    def var(node):
        key = id(node)
        if key in names:
            return names[key]
        if node.op == "get_attr":
            if node.target not in leaves:
                leaves.append(node.target)
            names[key] = source_of(node.target)
            return names[key]
        arg_src = lambda a: _literal(a, var)  # noqa: E731 - visits (and writes) the inputs first
        args = [arg_src(a) for a in node.args]
        kwargs = [f"{k}={arg_src(v)}" for k, v in node.kwargs.items()]
        if node.op == "call_function":
            fn, helper = _qualified(node.target)
            if helper:
                helpers[fn] = helper
            expr = f"{fn}({', '.join(args + kwargs)})"
        elif node.op == "call_method":
            expr = f"{args[0]}.{node.target}({', '.join(args[1:] + kwargs)})"
        else:
            raise CannotWrite(f"the node {node.name} ({node.op})")
        name = f"{prefix}{len(lines)}"
        lines.append(f"{name} = {expr}")
        names[key] = name
        return name

    out = {}
    for v, node in roots.items():
        out[v] = var(node)
    lines += [f"{v} = {src}" for v, src in out.items()]
    return lines, list(helpers.values()), leaves
