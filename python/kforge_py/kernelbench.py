"""Loading a KernelBench-format file: a module defining `class Model(nn.Module)`,
`get_inputs()` and `get_init_inputs()`, usually with its sizes as module-level integers
(`batch_size = 128`). Those integers can be overridden before the module runs, so the same
file yields the problem at smaller sizes (for checking an import against the interpreter)."""
import ast
from dataclasses import dataclass, field

import torch


class KernelBenchError(Exception):
    """A problem with the file itself (not KernelBench format, raises while loading...)."""


@dataclass
class Loaded:
    model: torch.nn.Module
    inputs: list
    int_globals: dict = field(default_factory=dict)    # name -> value, every int global
    literal_ints: dict = field(default_factory=dict)   # name -> value, `NAME = <int literal>`
    namespace: dict = field(default_factory=dict)


def literal_int_globals(tree):
    """Top-level `NAME = <int literal>` assignments, in source order."""
    out = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Constant) and type(node.value.value) is int):
            out[node.targets[0].id] = node.value.value
    return out


def _override(tree, overrides):
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id in overrides
                and isinstance(node.value, ast.Constant)):
            node.value = ast.copy_location(ast.Constant(overrides[node.targets[0].id]),
                                           node.value)
    return tree


def load(path, overrides=None, seed=0, input_seed=None):
    """Runs the file (with `overrides` applied to its literal int globals), builds Model from
    get_init_inputs() under torch.manual_seed(seed), puts it in eval mode and draws inputs with
    get_inputs() under torch.manual_seed(input_seed or seed + 1)."""
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    except OSError as e:
        raise KernelBenchError(f"cannot read: {e.strerror}") from e
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as e:
        raise KernelBenchError(f"line {e.lineno}: syntax error: {e.msg}") from e
    literals = literal_int_globals(tree)
    if overrides:
        tree = _override(tree, overrides)
    ns = {"__name__": "kernelbench_module", "__file__": path}
    try:
        exec(compile(tree, path, "exec"), ns)
    except Exception as e:  # the file's own code failed: report it, do not crash the batch
        raise KernelBenchError(f"running the file raised {type(e).__name__}: {e}") from e
    for needed in ("Model", "get_inputs", "get_init_inputs"):
        if needed not in ns:
            raise KernelBenchError(
                f"not KernelBench format: no `{needed}` defined "
                "(expected class Model(nn.Module), get_inputs(), get_init_inputs())")
    if not (isinstance(ns["Model"], type) and issubclass(ns["Model"], torch.nn.Module)):
        raise KernelBenchError("not KernelBench format: `Model` is not an nn.Module subclass")
    try:
        torch.manual_seed(seed)
        init = ns["get_init_inputs"]()
        model = ns["Model"](*init)
        model.eval()
        torch.manual_seed(seed + 1 if input_seed is None else input_seed)
        inputs = list(ns["get_inputs"]())
    except Exception as e:
        raise KernelBenchError(
            f"building Model or its inputs raised {type(e).__name__}: {e}") from e
    ints = {k: v for k, v in ns.items()
            if type(v) is int and not k.startswith("_")}
    return Loaded(model, inputs, ints, literals, ns)


def draw_inputs(loaded, seed):
    """Fresh inputs from the file's own get_inputs() (so their distribution is the file's)."""
    torch.manual_seed(seed)
    return list(loaded.namespace["get_inputs"]())
