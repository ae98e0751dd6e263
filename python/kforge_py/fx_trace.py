"""Tracing a whole network with torch.fx at the file's concrete shapes.

torch.fx's symbolic tracer gives every value a Proxy, `x.size(-1)` included, so code that
branches or slices on a shape (`if H % 2`, `att[:, :, :T, :T]`, `for t in range(seq_len)`)
cannot be traced. ConcreteTracer runs each traced op on the example inputs as it records it
(on the meta device where the model is loaded there: shapes only, no arithmetic), so every value
that is not a tensor - a size, a shape tuple, a dtype, a device, `x.dim()`, `len(x)` - is a
plain Python value, and only tensors stay proxies. Shape-dependent control flow is resolved at
the file's sizes: a branch on a size keeps the taken side, a loop over a size is unrolled; the
spec built from such a graph may hold only at those sizes (import_check says so when the sizes
cannot be re-bound). Control flow on a tensor's values (`if x.sum() > 0`) still raises, naming
it.

Leaf modules are torch.nn's own modules (as symbolic_trace), except the containers and the
transformer layers (TransformerEncoderLayer and friends), which are traced through so that their
attention and feed-forward parts become ordinary nodes. The model's attributes that forward()
assigns (`self.hidden = ...`) are restored after tracing: the module keeps its initial state."""
import contextlib
import sys

import torch
import torch.fx
import torch.fx._symbolic_trace as _st
import torch.nn as nn
from torch.fx.proxy import Proxy, TraceError
from torch.overrides import TorchFunctionMode

from kforge_py.fx_types import Unsupported

# torch.nn modules traced through rather than kept as one call_module node
TRACED_THROUGH = (nn.TransformerEncoderLayer, nn.TransformerEncoder,
                  nn.TransformerDecoderLayer, nn.TransformerDecoder, nn.Transformer)


@contextlib.contextmanager
def _unpatched():
    """nn.Module's own __call__ and __getattr__ while the tracer has them patched: a value is
    computed by running the module, not by tracing it again."""
    call, get = nn.Module.__call__, nn.Module.__getattr__
    nn.Module.__call__, nn.Module.__getattr__ = _st._orig_module_call, _st._orig_module_getattr
    try:
        yield
    finally:
        nn.Module.__call__, nn.Module.__getattr__ = call, get


def _contains_tensor(v):
    if isinstance(v, torch.Tensor):
        return True
    if isinstance(v, (list, tuple)):
        return any(_contains_tensor(e) for e in v)
    if isinstance(v, dict):
        return any(_contains_tensor(e) for e in v.values())
    return False


_MISSING = object()


class Failed:
    """The value of a node PyTorch raised on: the node is kept (the converter may refuse the op
    by name first, or shape propagation says how PyTorch fails); reading the value raises."""

    def __init__(self, error):
        self.error = error

    def unsupported(self):
        text = (str(self.error).strip().splitlines() or [type(self.error).__name__])[0]
        return Unsupported(f"the model fails in PyTorch on its own inputs: {text}")


class ValueProxy(Proxy):
    """A Proxy that knows the value it stands for (a tensor, or a tuple holding tensors)."""

    def __init__(self, node, tracer, value):
        super().__init__(node, tracer)
        self.value = value

    def __len__(self):
        return len(self.value)

    def __iter__(self):
        if isinstance(self.value, torch.Tensor) and self.value.dim() == 0:
            raise TraceError("iteration over a 0-d tensor")
        return iter([self[i] for i in range(len(self.value))])

    def __bool__(self):
        raise TraceError(f"control flow on a tensor's values (node {self.node.name}): the "
                         "branch taken depends on the data, not on the shapes")

    def __index__(self):
        raise TraceError(f"a tensor's value used as an index (node {self.node.name})")

    def __getattr__(self, k):
        if k == "value":
            raise AttributeError(k)
        if isinstance(self.value, Failed):
            return super().__getattr__(k)
        v = getattr(self.value, k, _MISSING)
        if v is not _MISSING and not callable(v):
            if not _contains_tensor(v):
                return v  # .shape, .dtype, .device, .is_nested, ...: a plain value
            return self.tracer.create_proxy("call_function", getattr, (self, k), {})  # x.T
        return super().__getattr__(k)


class ConcreteTracer(torch.fx.Tracer):
    def __init__(self, root, example_inputs, scalar_args):
        super().__init__()
        self.proxy_buffer_attributes = True  # buffers are nodes: fx_fold folds what reads them
        self.root_module = root
        self.example_inputs = list(example_inputs)
        self.scalar_args = scalar_args or {}
        self.placeholder_index = 0

    def is_leaf_module(self, m, qualname):
        if isinstance(m, TRACED_THROUGH):
            return False
        return super().is_leaf_module(m, qualname)

    def _value(self, a):
        if isinstance(a, ValueProxy):
            if isinstance(a.value, Failed):
                raise a.value.unsupported()
            return a.value
        if isinstance(a, torch.fx.proxy.Attribute):  # x.attr, not called
            return getattr(self._value(a.root), a.attr)
        if isinstance(a, Proxy):
            raise TraceError(f"node {a.node.name} has no value")
        if isinstance(a, tuple):
            return tuple(self._value(e) for e in a)
        if isinstance(a, list):
            return [self._value(e) for e in a]
        if isinstance(a, dict):
            return {k: self._value(e) for k, e in a.items()}
        if isinstance(a, slice):
            return slice(self._value(a.start), self._value(a.stop), self._value(a.step))
        return a

    def _compute(self, kind, target, args, kwargs):
        if kind == "placeholder":
            i = self.placeholder_index
            self.placeholder_index += 1
            return self.example_inputs[i] if i < len(self.example_inputs) else None
        if kind == "get_attr":
            attr = self.root_module
            for part in target.split("."):
                attr = getattr(attr, part)
            return attr
        a, kw = self._value(args), self._value(kwargs)
        if kind == "call_function":
            return target(*a, **kw)
        if kind == "call_method":
            return getattr(a[0], target)(*a[1:], **kw)
        if kind == "call_module":
            return self.root_module.get_submodule(target)(*a, **kw)
        raise TraceError(f"unexpected node kind {kind}")

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        if kind == "output":
            return super().create_proxy(kind, target, args, kwargs, name, type_expr,
                                        proxy_factory_fn)
        if kind == "call_module":
            mod = self.root_module.get_submodule(target)
            if isinstance(mod, nn.RNNBase) and type(mod) not in (nn.LSTM, nn.GRU):  # fx_rnn
                raise recurrent_refusal(mod, target, self._value(args[0]) if args else None)
            if type(mod) in (nn.LSTM, nn.GRU, nn.LSTMCell, nn.GRUCell):
                args, kwargs = zero_initial_state(mod, self._value, args, kwargs)
        try:
            with torch.no_grad(), _unpatched():
                value = self._compute(kind, target, args, kwargs)
        except (Unsupported, TraceError):
            raise
        except Exception as e:  # PyTorch rejects the op: the node stays, without a value
            value = Failed(e)
        if kind not in ("placeholder", "get_attr") and not _contains_tensor(value) and \
                not isinstance(value, Failed):
            return value  # a size, a shape, a dtype, a flag: a plain value from here on
        node_args, node_kwargs = self.create_arg(args), self.create_arg(kwargs)
        node = self.create_node(kind, target, node_args, node_kwargs, name, type_expr)
        return ValueProxy(node, self, value)


# tensors drawn at random in forward (KernelBench 35_LSTM's h0 = torch.randn(...) when none is
# given): such a model's output differs on every call
_RANDOM = {torch.randn, torch.rand, torch.randint, torch.randn_like, torch.rand_like,
           torch.randint_like, torch.normal, torch.bernoulli, torch.multinomial, torch.randperm}

def drawn_arguments(model, inputs):
    """forward()'s optional tensor arguments that it draws at random when they are not given
    (KernelBench 35_LSTM: `h0 = torch.randn(...)` where h0 is None): the tensors one call
    draws, in order, bound to the optional parameters (default None) after `inputs`, in
    order. They become inputs of the spec - the model computes the same function of them - and
    a caller that passes none (KernelBench's harness) draws them as Model does (the same calls,
    in the same order: the RNG is consumed alike). On real tensors, the binding is verified:
    Model given the draws must return what it returned drawing them itself; [] where there are
    no such arguments or the binding does not hold (the trace then refuses the draw)."""
    import inspect
    rest = list(inspect.signature(model.forward).parameters.values())[len(inputs):]
    if not rest or any(p.default is not None or p.kind is not p.POSITIONAL_OR_KEYWORD
                       for p in rest):
        return []
    draws = []

    class _Record(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if func in _RANDOM:
                draws.append(out)
            return out

    saved = _snapshot(model)  # forward() may reassign state (self.hidden = ...): undone below
    try:
        with torch.no_grad():
            with _Record():
                drawn = model(*inputs)
            if not draws or len(draws) > len(rest) or \
                    not all(isinstance(d, torch.Tensor) for d in draws):
                return []
            if any(d.is_meta for d in draws):
                return draws
            _restore(saved)
            given = model(*inputs, *draws)
    except Exception:  # noqa: BLE001 - the trace reports what the model does wrong
        return []
    finally:
        _restore(saved)
    outs = [o for o in (drawn if isinstance(drawn, (tuple, list)) else [drawn])]
    again = [o for o in (given if isinstance(given, (tuple, list)) else [given])]
    if len(outs) != len(again) or not all(
            isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and torch.equal(a, b)
            for a, b in zip(outs, again)):
        return []
    return draws


# ops per time step and layer of an unrolled cell (projections, gates, state update)
_CELL_OPS = {"RNN": 4, "LSTM": 14, "GRU": 16}


def recurrent_refusal(mod, qualname, x):
    """Unsupported for an nn.RNN layer (nn.LSTM and nn.GRU are the spec's lstm / gru ops,
    fx_rnn): kforge has no plain-RNN cell op, and unrolled the layer would be far past the
    spec's op limit."""
    kind = type(mod).__name__
    steps = x.shape[1 if mod.batch_first else 0] if isinstance(x, torch.Tensor) and \
        x.dim() == 3 else 1
    dirs = 2 if mod.bidirectional else 1
    ops = _CELL_OPS.get(getattr(mod, "mode", kind).split("_")[0], 8) * steps * \
        mod.num_layers * dirs
    return Unsupported(
        f"nn.{kind} (module {qualname}: {mod.num_layers} layer(s)"
        f"{', bidirectional' if dirs == 2 else ''} over {steps} time steps) is not supported: "
        f"kforge has no plain-RNN cell op (only lstm and gru), and unrolled the layer would be about {ops:,} ops "
        f"(the spec's limit is 4,096)")


def zero_initial_state(mod, value_of, args, kwargs):
    """(args, kwargs) of an nn.LSTM / nn.GRU call with the zero initial state PyTorch uses where
    none is given (`out, _ = self.lstm(x)`, or hx=None) passed explicitly: h0 (and c0) zeros of
    [num_layers * directions, batch, hidden] ([batch, hidden] for an LSTMCell / GRUCell step) on
    x's device, which the trace records as tensors
    forward() made (`_tensor_constantN`), so the spec's lstm / gru op reads them as its state
    inputs. Unchanged where a state is given or x is not a batched [.., .., features] tensor
    (fx_rnn refuses that by name)."""
    args, kwargs = tuple(args), dict(kwargs or {})
    given = args[1] if len(args) > 1 else kwargs.get("hx")
    x = value_of(args[0]) if args else None
    if isinstance(mod, (nn.LSTMCell, nn.GRUCell)):  # one step: x [batch, features]
        if given is not None or not isinstance(x, torch.Tensor) or x.dim() != 2:
            return args, kwargs
        h = torch.zeros(x.shape[0], mod.hidden_size, dtype=x.dtype, device=x.device)
        hx = (h, torch.zeros_like(h)) if isinstance(mod, nn.LSTMCell) else h
        kwargs.pop("hx", None)
        return (args[0], hx) + args[2:], kwargs
    if given is not None or not isinstance(x, torch.Tensor) or x.dim() != 3:
        return args, kwargs
    dirs = 2 if mod.bidirectional else 1
    batch = x.shape[0 if mod.batch_first else 1]
    h_size = getattr(mod, "proj_size", 0) or mod.hidden_size

    def zeros(size):
        return torch.zeros(mod.num_layers * dirs, batch, size, dtype=x.dtype, device=x.device)

    hx = (zeros(h_size), zeros(mod.hidden_size)) if isinstance(mod, nn.LSTM) else \
        zeros(h_size)
    kwargs.pop("hx", None)
    return (args[0], hx) + args[2:], kwargs


def _snapshot(model):
    """The state of every submodule that forward() could reassign."""
    return [(m, dict(m.__dict__), dict(m._parameters), dict(m._buffers), dict(m._modules))
            for m in model.modules()]


def _restore(saved):
    for m, d, params, bufs, mods in saved:
        m.__dict__.clear()
        m.__dict__.update(d)
        m._parameters.clear()
        m._parameters.update(params)
        m._buffers.clear()
        m._buffers.update(bufs)
        m._modules.clear()
        m._modules.update(mods)


class _LiteralsOnCpu(TorchFunctionMode):
    """torch.tensor(c, device=x.device) in forward: x.device is a plain value here, meta for a
    model loaded on the meta device, where the tensor would lose the number it holds (the
    importer reads it as a constant). Tensors made from Python data stay on the CPU instead.
    A random draw in forward (torch.randn, ...) is refused: the model is not reproducible
    (an optional argument drawn when not given is an input instead: drawn_arguments)."""

    def __init__(self, model=None):
        super().__init__()
        self.model = model

    def _copy_into_state(self, dst, src):
        """dst.copy_(src) with dst a tensor the model holds (not traced: a plain attribute) and
        src a traced value (KernelBench 33_VanillaRNN: self.hidden.copy_(initial_hidden)): the
        attribute holds src from here on (the trace reads it; tracing restores the model). The
        copy itself is not done: the model's tensor keeps its values."""
        if tuple(dst.shape) != tuple(src.value.shape) or dst.dtype != src.value.dtype:
            raise Unsupported(f"copy_ of a traced {list(src.value.shape)} {src.value.dtype} "
                              f"into a model tensor of shape {list(dst.shape)} {dst.dtype} (a "
                              "broadcast or a cast into model state) is not supported")
        holders = [(m, k) for m in (self.model.modules() if self.model is not None else [])
                   for k, v in m.__dict__.items() if v is dst]
        if not holders:
            raise Unsupported("copy_ of a traced value into a tensor that no attribute of the "
                              "model holds is not supported")
        for m, k in holders:
            m.__dict__[k] = src
        return src

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.Tensor.copy_ and len(args) >= 2 and isinstance(args[1], ValueProxy) \
                and isinstance(args[0], torch.Tensor) and not isinstance(args[0], Proxy) \
                and isinstance(getattr(args[1], "value", None), torch.Tensor):
            return self._copy_into_state(args[0], args[1])
        if func in _RANDOM:  # a draw in forward, e.g. torch.randn(...) for a missing h0
            raise Unsupported(f"torch.{func.__name__} in forward: the model's output is random "
                              "in its own run (a fresh draw each call), not reproducible (only a "
                              "draw for an optional forward() argument left None imports: "
                              "as that argument)")
        kwargs = dict(kwargs or {})
        if func in (torch.tensor, torch.as_tensor, torch.scalar_tensor) and \
                str(kwargs.get("device")) == "meta":
            kwargs["device"] = "cpu"
        return func(*args, **kwargs)


def _einops_takes_proxies():
    """einops (KernelBench's Mamba2 files) picks its backend by the tensor's type: a ValueProxy
    gets the torch backend, so rearrange / repeat record the reshapes and permutes they do."""
    backends = sys.modules.get("einops._backends")
    if backends is not None and hasattr(backends, "TorchBackend"):
        backends._type2backend.setdefault(ValueProxy, backends.TorchBackend())


def trace(model, example_inputs, scalar_args=None):
    """A GraphModule of `model` traced at the shapes of `example_inputs` (tensors, and numbers
    that `scalar_args` names by forward() parameter: those are baked in)."""
    import inspect
    scalar_args = dict(scalar_args or {})
    params = list(inspect.signature(model.forward).parameters.values())
    for p in params[len(example_inputs):]:  # forward(x, initial_states=None) given x only
        if p.default is not inspect.Parameter.empty and p.kind in (
                p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            scalar_args.setdefault(p.name, p.default)
    tracer = ConcreteTracer(model, [x for x in example_inputs], scalar_args)
    _einops_takes_proxies()
    saved = _snapshot(model)
    try:
        with _LiteralsOnCpu(model):
            graph = tracer.trace(model, concrete_args=scalar_args or None)
        made = {k: v for k, v in model.__dict__.items() if k.startswith("_tensor_constant")}
    finally:
        _restore(saved)
    model.__dict__.update(made)  # constants made in forward, read by get_attr nodes
    functionalize_inplace(graph)
    return torch.fx.GraphModule(tracer.root, graph, type(model).__name__)


# ops whose result shares its input's storage: an in-place op on their result writes the input
_VIEWS = {"view", "view_as", "reshape", "reshape_as", "transpose", "permute", "t", "narrow",
          "select", "expand", "expand_as", "squeeze", "unsqueeze", "flatten", "unflatten",
          "split", "chunk", "unbind", "diagonal", "as_strided", "contiguous", "detach",
          "movedim", "swapaxes", "getitem", "getattr", "T", "mT"}


def _op_name(node):
    t = node.target
    return (t if isinstance(t, str) else getattr(t, "__name__", str(t))).strip("_") \
        if node.op in ("call_method", "call_function") else node.op


def functionalize_inplace(graph):
    """In-place tensor ops (`h.mul_(0.5)`, `h.add_(y)`, `h.clamp_(min=0)`, `torch.relu_(h)`)
    as their out-of-place ops, each later reader of h reading the result instead: fx records
    them as nodes with no reader (dead code to the converter) while the code after them reads
    the mutated h. Refused by name where the mutated tensor may share storage with another (a
    view, an input, a parameter or buffer): writing it would change that one too."""
    order = {n: i for i, n in enumerate(graph.nodes)}
    for node in list(graph.nodes):
        if node.op not in ("call_method", "call_function") or not node.args:
            continue
        name = node.target if isinstance(node.target, str) else getattr(node.target,
                                                                         "__name__", "")
        if not name.endswith("_") or name.startswith("_") or name in ("copy_",):
            continue
        pure = name[:-1]
        x = node.args[0]
        if not isinstance(x, torch.fx.Node) or not hasattr(torch.Tensor, pure):
            continue
        if x.op in ("placeholder", "get_attr") or _op_name(x) in _VIEWS:
            what = {"placeholder": "an input", "get_attr": "a parameter or buffer"}.get(x.op,
                                                                                     "a view")
            raise Unsupported(f"{name} (an in-place op) on {x.name}, {what} that may share its "
                              f"storage with another tensor, is not supported; write "
                              f"{x.name} = {x.name}.{pure}(...)")
        if node.op == "call_method":
            node.target = pure
        else:
            fn = getattr(torch, pure, None) or getattr(torch.nn.functional, pure, None)
            if fn is None:
                continue
            node.target = fn
        for user in list(x.users):
            if user is not node and order.get(user, -1) > order[node]:
                user.replace_input_with(x, node)
