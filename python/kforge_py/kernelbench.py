"""Loading a KernelBench-format file: a module defining `class Model(nn.Module)`,
`get_inputs()` and `get_init_inputs()`, usually with its sizes as module-level integers
(`batch_size = 128`). Those integers can be overridden before the module runs, so the same
file yields the problem at smaller sizes (for checking an import against the interpreter).
Loaded on the meta device, the file's tensors have shapes and dtypes but no storage: a
full-size problem is traced without allocating its inputs or weights."""
import ast
import contextlib
from dataclasses import dataclass, field

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._device import _device_constructors

from kforge_py import fx_trace


class KernelBenchError(Exception):
    """A problem with the file itself (not KernelBench format, raises while loading...)."""


@dataclass
class Loaded:
    model: torch.nn.Module
    inputs: list
    int_globals: dict = field(default_factory=dict)    # name -> value, every int global
    literal_ints: dict = field(default_factory=dict)   # name -> value, `NAME = <int literal>`
    namespace: dict = field(default_factory=dict)
    on_meta: bool = False                               # tensors without storage (load(meta=True))
    # per input, how get_inputs() drew it: "uniform01" (torch.rand), "normal" (torch.randn) or
    # None (anything else, forward()'s own draws included) - the spec's "distribution"
    input_distributions: list = field(default_factory=list)


class _OnMeta(TorchFunctionMode):
    """Every tensor made while it is active lands on the meta device, a device named in the call
    (`device="cpu"`, "cuda") included, and `.cuda()` / `.to(device)` of a meta tensor keep it
    there (a cast to another dtype still applies). Tensors made from Python or NumPy data
    (torch.from_numpy) are not covered: their data already exists."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in _device_constructors() or "device" in kwargs:
            kwargs["device"] = "meta"
        elif func in (torch.Tensor.cuda, torch.Tensor.cpu) and args[0].is_meta:
            return args[0]
        elif func is torch.Tensor.to and args[0].is_meta:
            _, dtype, _, _ = torch._C._nn._parse_to(*args[1:], **kwargs)
            return args[0] if dtype is None else func(args[0], dtype=dtype)
        return func(*args, **kwargs)


class _Draws(TorchFunctionMode):
    """Which tensors torch.rand and torch.randn made while it is active (through the casts and
    moves that keep their values: .cuda(), .to(dtype), .half(), ...), for kind_of()."""

    KINDS = {torch.rand: "uniform01", torch.randn: "normal"}
    KEEPS = {torch.Tensor.cuda, torch.Tensor.cpu, torch.Tensor.to, torch.Tensor.contiguous,
             torch.Tensor.half, torch.Tensor.float, torch.Tensor.bfloat16, torch.Tensor.double,
             torch.Tensor.clone}

    def __init__(self):
        super().__init__()
        self.made = {}  # id -> (tensor, kind): the tensor held so that its id stays its own

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        kind = self.KINDS.get(func)
        if kind is None and func in self.KEEPS and args:
            kind = self.kind_of(args[0])
        if kind is not None and isinstance(out, torch.Tensor):
            self.made[id(out)] = (out, kind)
        return out

    def kind_of(self, x):
        hit = self.made.get(id(x))
        return hit[1] if hit is not None and hit[0] is x else None


def _int_literal(node):
    return isinstance(node, ast.Constant) and type(node.value) is int


def _size_keys(name, count):
    """The names of the elements of a size tuple `name = (a, b, ...)`: `name` for one element
    (KernelBench's `input_shape = (4096,)`), `name_0`, `name_1`, ... for several."""
    return [name] if count == 1 else [f"{name}_{i}" for i in range(count)]


def _is_size_tuple(v):
    return isinstance(v, (ast.Tuple, ast.List)) and v.elts and all(_int_literal(e) for e in v.elts)


def _literal_assignments(tree):
    """(name, value node, setter) of the top-level `NAME = <int literal>` and `NAME = (<int
    literal>, ...)` assignments, in source order; `A = B = 64` gives A and B (one value), and
    KernelBench's `height, width = 32, 32` each name its own literal. setter(node) replaces the
    value node."""
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        v = node.value
        if all(isinstance(t, ast.Name) for t in node.targets):
            if _int_literal(v) or _is_size_tuple(v):
                for t in node.targets:
                    yield t.id, v, lambda new, node=node: setattr(node, "value", new)
        elif (len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple)
              and all(isinstance(t, ast.Name) for t in node.targets[0].elts)
              and isinstance(v, ast.Tuple) and len(v.elts) == len(node.targets[0].elts)
              and all(_int_literal(e) for e in v.elts)):
            for i, t in enumerate(node.targets[0].elts):
                yield t.id, v.elts[i], lambda new, elts=v.elts, i=i: elts.__setitem__(i, new)


def literal_int_globals(tree):
    """Top-level `NAME = <int literal>` assignments, and the elements of top-level size tuples
    `NAME = (<int literal>, ...)` (named by _size_keys), in source order."""
    out = {}
    for name, value, _ in _literal_assignments(tree):
        if _int_literal(value):
            out[name] = value.value
        else:
            for key, e in zip(_size_keys(name, len(value.elts)), value.elts):
                out.setdefault(key, e.value)
    return out


def _override(tree, overrides):
    for name, value, replace in _literal_assignments(tree):
        if _int_literal(value):
            if name in overrides:  # (A = B = 64: A and B map to one value)
                replace(ast.copy_location(ast.Constant(overrides[name]), value))
            continue
        elts = value.elts
        for i, key in enumerate(_size_keys(name, len(elts))):
            if key in overrides:
                elts[i] = ast.copy_location(ast.Constant(overrides[key]), elts[i])
    return tree


def _size_tuple_ints(ns, literals):
    """The current values of the size tuple elements among `literals`, by their keys."""
    out = {}
    for name, v in ns.items():
        if isinstance(v, (tuple, list)) and v and all(type(e) is int for e in v) and \
                not name.startswith("_"):
            for key, e in zip(_size_keys(name, len(v)), v):
                if key in literals and type(ns.get(key)) is not int:
                    out[key] = e
    return out


def load(path, overrides=None, seed=0, input_seed=None, meta=False, meta_inputs=False):
    """Runs the file (with `overrides` applied to its literal int globals), builds Model from
    get_init_inputs() under torch.manual_seed(seed), puts it in eval mode (dropout is the
    identity) except its batch / instance norms, and draws inputs with get_inputs() under
    torch.manual_seed(input_seed or seed + 1). The norms stay in training mode, as KernelBench
    runs a fresh Model: batch norm then normalizes with the batch's statistics, which eval mode
    would replace by the fresh running statistics (0 and 1, a near-identity). With `meta`, the
    file, Model() and get_inputs() run under _OnMeta: every tensor they make has no storage
    (tracing needs only shapes; Model.forward is not run). With `meta_inputs`, only
    get_inputs() runs there: the real model without the file's full-size inputs."""
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
    with _OnMeta() if meta else contextlib.nullcontext():
        model, inputs, kinds = _run(tree, path, ns, seed, input_seed, meta_inputs and not meta)
    ints = {k: v for k, v in ns.items()
            if type(v) is int and not k.startswith("_")}
    ints.update(_size_tuple_ints(ns, literals))
    return Loaded(model, inputs, ints, literals, ns, meta, kinds)


def _run(tree, path, ns, seed, input_seed, meta_inputs=False):
    """Runs the module body into `ns`, then Model(*get_init_inputs()) and get_inputs():
    (model, inputs, how each input was drawn)."""
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
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._NormBase):
                m.train()
        torch.manual_seed(seed + 1 if input_seed is None else input_seed)
        with _OnMeta() if meta_inputs else contextlib.nullcontext():
            with _Draws() as draws:
                inputs = list(ns["get_inputs"]())
            kinds = [draws.kind_of(x) for x in inputs]
            # forward()'s optional arguments it would draw itself (h0 = torch.randn(...))
            inputs += fx_trace.drawn_arguments(model, inputs)
    except Exception as e:
        raise KernelBenchError(
            f"building Model or its inputs raised {type(e).__name__}: {e}") from e
    return model, inputs, kinds + [None] * (len(inputs) - len(kinds))


def element_count(loaded):
    """Elements of the problem's tensors at the loaded sizes: the inputs, the parameters and
    the buffers (what a numeric check at these sizes materializes, once per copy)."""
    tensors = [x for x in loaded.inputs if isinstance(x, torch.Tensor)]
    tensors += list(loaded.model.parameters()) + list(loaded.model.buffers())
    return sum(t.numel() for t in tensors)


def draw_inputs(loaded, seed):
    """Fresh inputs from the file's own get_inputs() (so their distribution is the file's),
    and the optional forward() arguments the model would draw itself (fx_trace.drawn_arguments:
    run in fp64, the model would otherwise draw fp32 ones)."""
    torch.manual_seed(seed)
    inputs = list(loaded.namespace["get_inputs"]())
    return inputs + fx_trace.drawn_arguments(loaded.model, inputs)
