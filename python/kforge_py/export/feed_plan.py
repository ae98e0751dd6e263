"""Where each input of an exported op comes from, for ModelNew (model_new.py): the KernelBench
file is traced again, as the importer traced it, and its spec must be the exported one. Each
spec input, in the spec's order, is one Feed:

  arg    a forward() argument (its position and parameter name)
  drawn  an optional forward() argument that Model draws itself when it is not given
         (KernelBench 35_LSTM: `h0 = torch.randn(...)`; fx_trace.drawn_arguments): ModelNew
         makes the same RNG call, in the same order, on the same device (the Draw recipe,
         recorded from Model's own calls)
  attr   a parameter, buffer or plain tensor attribute of the model (its path, the shape the
         spec takes: a view of it where the shapes differ)
  fold   a constant computed from the model's buffers alone (fx_fold: MinGPT's mask, the one-hot
         matrix of Swin's relative-position index): its fx nodes, written as code by
         fold_source.py and computed from ModelNew's own buffers
  made   a tensor forward() makes from literals (the tracer's _tensor_constantN: Mamba's causal
         mask): its value, from the model traced on real tensors, saved in the package

plan(path, spec) returns a FeedPlan or raises Mismatch."""
import inspect
from dataclasses import dataclass, field

import torch
from torch.overrides import TorchFunctionMode

from kforge_py import fx_fold, kernelbench, spec_build, spec_torch
from kforge_py.fx_shape import resolve_dims, spec_extent
from kforge_py.fx_import import Unsupported


class Mismatch(Exception):
    """The KernelBench file does not give the exported spec, or ModelNew cannot feed it."""


@dataclass
class Draw:
    """One random call of Model.forward for a missing optional argument, as ModelNew repeats
    it: torch.<func>(*args, dtype=dtype, device=<device>) where device is "input" (Model passed
    an input's device), None (Model gave none: torch's default device) or a literal; `like` the
    argument name of a *_like call's tensor."""
    param: str
    func: str
    size: tuple = ()
    args: tuple = ()
    dtype: torch.dtype = torch.float32
    device: object = None
    like: str = None


@dataclass
class Feed:
    name: str
    kind: str                 # arg, drawn, attr, fold, made
    shape: tuple = ()         # the spec's shape (concrete)
    dtype: str = ""
    position: int = -1        # arg / drawn: forward() argument position
    path: str = ""            # attr: attribute path
    attr_shape: tuple = ()    # attr: the attribute's own shape
    holder: str = ""          # attr: "_parameters", "_buffers" or "__dict__"
    node: object = None       # fold: the folded node (fx_fold)
    value: object = None      # made: the tensor


@dataclass
class FeedPlan:
    feeds: list
    params: list              # forward()'s parameters: (name, default or inspect._empty, kind)
    named: bool               # whether ModelNew can name them (else forward(self, *args))
    given: int                # how many arguments get_inputs() gives
    draws: list               # Draw, in Model's order
    scalars: dict             # position -> the number the spec baked in
    out_shapes: list = None   # Model's output shapes (None where unknown)
    out_dtypes: list = None   # and dtypes
    real: object = None       # the model loaded on real tensors, where one was needed
    loaded: object = field(default=None, repr=False)


_RANDOM = {f.__name__: f for f in (torch.randn, torch.rand, torch.randint, torch.randn_like,
                                   torch.rand_like)}
_LITERAL = (type(None), bool, int, float, str)


def _holder(model, path):
    """Which dict of its module holds `path`: _parameters, _buffers, __dict__ (a plain tensor
    attribute), or None."""
    owner_path, _, leaf = path.rpartition(".")
    try:
        owner = model.get_submodule(owner_path) if owner_path else model
    except AttributeError:
        return None
    for d in ("_parameters", "_buffers"):
        if leaf in getattr(owner, d, {}):
            return d
    return "__dict__" if isinstance(owner.__dict__.get(leaf), torch.Tensor) else None


class _Stop(Exception):
    pass


def record_draws(model, given, count):
    """The first `count` random calls of model.forward(*given) (given on the meta device, so
    that a draw on the inputs' device shows as a draw on meta), as (func name, args, kwargs,
    result); stops forward() at the last one."""
    calls = []

    class _Record(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = getattr(func, "__name__", "")
            if _RANDOM.get(name) is func:
                out = func(*args, **dict(kwargs, device="meta"))
                calls.append((name, args, kwargs, out))
                if len(calls) == count:
                    raise _Stop()
                return out
            return func(*args, **kwargs)

    try:
        with torch.no_grad(), _Record():
            model(*given)
    except _Stop:
        pass
    except Exception as e:  # noqa: BLE001 - said below with the draws found so far
        if len(calls) < count:
            raise Mismatch(f"Model.forward raised {type(e).__name__} before its draw "
                           f"{len(calls) + 1} of {count} ({e})") from e
    if len(calls) < count:
        raise Mismatch(f"Model.forward made {len(calls)} random draws; the spec takes {count}")
    return calls


def draw_recipe(call, param, given_names, given):
    name, args, kwargs, out = call
    extra = set(kwargs) - {"device", "dtype", "requires_grad", "layout", "pin_memory"}
    if extra or kwargs.get("layout") not in (None, torch.strided):
        raise Mismatch(f"the draw torch.{name} for {param} takes {sorted(extra)}: ModelNew "
                       "cannot repeat it")
    device = kwargs.get("device")
    if isinstance(device, torch.device) and device.type == "meta":
        device = "input"
    elif device is not None:
        device = str(device)
    d = Draw(param, name, size=tuple(out.shape), dtype=out.dtype, device=device)
    if name.endswith("_like"):
        src = next((n for n, g in zip(given_names, given) if g is args[0]), None)
        if src is None:
            raise Mismatch(f"torch.{name} for {param} is of a tensor that is no argument of "
                           "forward(): ModelNew cannot repeat it")
        d.like, d.device = src, None
        return d
    if name == "randint":
        bounds = [a for a in args if isinstance(a, int)]
        d.args = tuple(bounds[:2] if len(bounds) >= 2 else bounds[:1])
    return d


def concrete_shape(shape, dims):
    """A spec shape in numbers: each entry a dim name, an integer or a dim expression ("4*H",
    "D64+D32"), every name in `dims`, where a derived dim's value may itself be an expression
    ("D25": "window*window_1"; fx_shape.resolve_dims)."""
    dims = resolve_dims(dims)

    def size(entry):
        n = spec_extent(entry, dims)
        if n is None:
            raise KeyError(f"shape entry {entry!r} names a dim the spec's dims lack")
        return int(n)
    return tuple(size(e) for e in shape)


def _meta(x):
    return x.to("meta") if isinstance(x, torch.Tensor) else x


def plan(path, spec, traced=None, real=None):
    """traced: (loaded, Converter) where the caller traced the file for `spec` itself; real:
    the file loaded on real tensors where the caller has it (made constants need one)."""
    from kforge_py.import_kernelbench import load_for_tracing
    if traced is None:
        try:
            loaded, _ = load_for_tracing(path)
            rebuilt, conv = spec_build.build(loaded, spec["name"], "",
                                             spec["precision"]["policy"])
        except (kernelbench.KernelBenchError, Unsupported) as e:
            raise Mismatch(f"cannot trace it again: {e}") from e
        if not spec_build.same_structure(rebuilt, spec) or rebuilt["dims"] != spec["dims"]:
            raise Mismatch(f"it does not give the exported spec {spec['name']} (was it edited "
                           "since the import?)")
    else:
        loaded, conv = traced
    model = loaded.model
    sig = list(inspect.signature(model.forward).parameters.values())
    params = [(p.name, p.default, p.kind) for p in sig]
    named = all(p.kind is p.POSITIONAL_OR_KEYWORD and (
        p.default is p.empty or type(p.default) in _LITERAL) for p in sig)
    torch.manual_seed(0)
    with kernelbench._OnMeta():
        given = len(loaded.namespace["get_inputs"]())
    drawn_pos = sorted(conv.placeholder_pos[n] for n in conv.placeholders
                       if conv.placeholder_pos[n] >= given)
    draws = []
    if drawn_pos:
        if not named:
            raise Mismatch("forward() draws its optional arguments but its signature has "
                           "*args / keyword-only parameters: ModelNew cannot name them")
        given_inputs = [_meta(x) for x in loaded.inputs[:given]]
        calls = record_draws(model, given_inputs, len(loaded.inputs) - given)
        names = [p[0] for p in params]
        draws = [draw_recipe(c, names[given + k], names[:given], given_inputs)
                 for k, c in enumerate(calls)]
        if any(pos >= given + len(draws) for pos in drawn_pos):
            raise Mismatch("a drawn argument of the spec is not one Model.forward draws")
    # a Linear after a flatten of pooled features has a weight of a dim its graph derives
    # ("D400": "D16*H_out_out*W_out_out", the pool's out_dims): run the graph for those
    dims = spec_torch.with_graph_dims(spec)["dims"]

    def concrete(shape):
        return concrete_shape(shape, dims)

    feeds = []
    for n, t in spec["inputs"].items():
        f = Feed(n, "", concrete(t["shape"]), t["dtype"])
        if n in conv.placeholders:
            f.position = conv.placeholder_pos[n]
            f.kind = "arg" if f.position < given else "drawn"
        else:
            p, shape = conv.params[n]
            if p.startswith(fx_fold.FOLD_PREFIX):
                f.kind, f.node = "fold", conv.folded[n]
            elif p.startswith("_tensor_constant"):
                if real is None:
                    real = loaded if not loaded.on_meta else kernelbench.load(path)
                f.kind = "made"
                f.value = spec_build._made_constant(real, conv, p, shape).detach().reshape(
                    shape).contiguous()
            else:
                f.kind, f.path = "attr", p
                attr = model
                for part in p.split("."):
                    attr = getattr(attr, part)
                f.attr_shape = tuple(attr.shape)
                f.holder = _holder(model, p)
                if f.holder is None:
                    raise Mismatch(f"the op's input {n} reads {p}, which is no parameter, "
                                   "buffer or tensor attribute of a submodule")
        feeds.append(f)
    scalars = {i: x for i, x in enumerate(loaded.inputs[:given])
               if not isinstance(x, torch.Tensor)}
    outs = meta_outputs(loaded)
    return FeedPlan(feeds, params, named, given, draws, scalars,
                    outs and [tuple(o.shape) for o in outs], outs and [o.dtype for o in outs],
                    real, loaded)


def meta_outputs(loaded):
    """Model's outputs at the loaded sizes on the meta device, or None where its forward does
    not run there (the shapes are a convenience: the op's own shapes stand)."""
    try:
        with kernelbench._OnMeta(), torch.no_grad():
            out = loaded.model(*[_meta(x) for x in loaded.inputs])
        return list(out) if isinstance(out, (tuple, list)) else [out]
    except Exception:  # noqa: BLE001
        return None
