"""PyTorch functions the spec has no op for, written as the spec ops they equal (used by
fx_ops.convert). Each decomposition is exact in real arithmetic and, rounded once per op in
f32, stays inside the fp32 tolerance the importer checks against PyTorch at fp64."""
import math

from kforge_py.fx_import import Tensor, Transposed, Unsupported, is_scalar

# 0-d tensors built from a Python number inside forward (torch.tensor(0.2)): they broadcast as
# the number does, so they are that number.
CONSTANT_TENSORS = ("tensor", "as_tensor", "scalar_tensor")

# name -> fn(conv, node, args, kw, x, shape, dtype) -> the node's value (args and kw converted)
DECOMPOSED = {}


def _decomposes(*names):
    def register(fn):
        for n in names:
            DECOMPOSED[n] = fn
        return fn
    return register


class ConstantTensor(float):
    """The number of a 0-d tensor made in forward: a scalar operand everywhere (is_scalar), and
    told apart from a dim where a function takes either (torch.max(x, 1) reduces dim 1,
    torch.max(x, torch.tensor(1)) is the element-wise maximum)."""


def constant_tensor(args, kw):
    """torch.tensor(c) / as_tensor(c) / scalar_tensor(c) of one number, or None (a list, a
    tensor argument)."""
    v = args[0] if args else kw.get("data", kw.get("s"))
    if isinstance(v, bool) or not is_scalar(v):
        return None
    return ConstantTensor(v)


@_decomposes("hardswish")
def hardswish(conv, node, args, kw, x, shape, dtype):
    """x * hardsigmoid(x): x * clamp(x / 6 + 1/2, 0, 1)."""
    from kforge_py.fx_ops import hardsigmoid
    h = hardsigmoid(conv, node, x, shape, dtype, final=False)
    return conv.emit("mul", [x, h], node, shape, dtype)


@_decomposes("softsign")
def softsign(conv, node, args, kw, x, shape, dtype):
    """x / (1 + |x|)."""
    t = conv.emit("abs", [x], node, shape, dtype, False)
    t = conv.emit("add_scalar", [t], node, shape, dtype, False, value=1.0)
    return conv.emit("div", [x, t], node, shape, dtype)


@_decomposes("tanhshrink")
def tanhshrink(conv, node, args, kw, x, shape, dtype):
    """x - tanh(x)."""
    t = conv.emit("tanh", [x], node, shape, dtype, False)
    return conv.emit("sub", [x, t], node, shape, dtype)


@_decomposes("logsigmoid", "log_sigmoid")
def logsigmoid(conv, node, args, kw, x, shape, dtype):
    """-softplus(-x) (beta 1, threshold 20: below x = -20 it is x itself, as log(sigmoid(x))
    is to within 2e-9)."""
    t = conv.emit("neg", [x], node, shape, dtype, False)
    t = conv.emit("softplus", [t], node, shape, dtype, False, beta=1.0, threshold=20.0)
    return conv.emit("neg", [t], node, shape, dtype)


@_decomposes("softmin")
def softmin(conv, node, args, kw, x, shape, dtype):
    """softmax(-x) over dim."""
    if (args[3] if len(args) > 3 else kw.get("dtype")) is not None:
        raise Unsupported("softmin with a dtype is not supported")
    dim = args[1] if len(args) > 1 else kw.get("dim")
    t = conv.emit("neg", [x], node, shape, dtype, False)
    return conv.emit("softmax", [t], node, shape, dtype, axis=conv.axis(dim, x))


@_decomposes("var", "std")
def variance(conv, node, args, kw, x, shape, dtype):
    """mean((x - mean(x))^2) * n / (n - correction) over dim (every dim by default), then sqrt
    for std: the two-pass form, one reduction chain per pass. Signatures: (x, dim, *,
    correction, keepdim), the older (x, dim, unbiased, keepdim) and (x, unbiased)."""
    from kforge_py.fx_ops import reduce_chain
    name = node.target if isinstance(node.target, str) else node.target.__name__
    dim = args[1] if len(args) > 1 else kw.get("dim")
    unbiased, keepdim = kw.get("unbiased"), kw.get("keepdim", False)
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if len(args) > 2:
        unbiased = args[2]
        keepdim = args[3] if len(args) > 3 else keepdim
    correction = kw.get("correction")
    if correction is None:
        correction = 0.0 if unbiased is False else 1.0
    if not is_scalar(correction) or not isinstance(keepdim, bool):
        raise Unsupported(f"{name} with correction {correction!r}, keepdim {keepdim!r} is not "
                          "supported")
    rank = len(x.shape)
    dims = list(range(rank)) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    dims = sorted({d % rank for d in dims})
    n = math.prod(x.shape[d] for d in dims)
    if n - correction <= 0:
        raise Unsupported(f"{name} over {n} element(s) with correction {correction:g} divides by "
                          "zero or less")
    kept = tuple(1 if i in dims else s for i, s in enumerate(x.shape))
    m = reduce_chain(conv, node, "mean", x, dims, True, kept, dtype, final=False)
    d = conv.emit("sub", [x, m], node, tuple(x.shape), dtype, False)
    d = conv.emit("square", [d], node, tuple(x.shape), dtype, False)
    std = name == "std"
    v = reduce_chain(conv, node, "mean", d, dims, keepdim, shape, dtype,
                     final=not std and correction == 0)
    if correction != 0:
        v = conv.emit("scale", [v], node, shape, dtype, not std, value=n / (n - correction))
    if std:
        v = conv.emit("sqrt", [v], node, shape, dtype)
    return v


def elementwise_bound(conv, node, name, a, b, shape, dtype):
    """torch.max / min / maximum / minimum / fmax / fmin of a tensor and a number (a 0-d tensor
    made in forward), in either order: max_scalar / min_scalar. Two tensors: no spec op
    (refused)."""
    x, c = (b, a) if is_scalar(a) else (a, b)
    x = conv.tensor(x)
    if not is_scalar(c):
        if isinstance(c, (Tensor, Transposed)):
            raise Unsupported(f"{name} of two tensors (element-wise) is not supported")
        raise Unsupported(f"{name} with {c!r} is not supported")
    op = "max_scalar" if name in ("max", "maximum", "fmax") else "min_scalar"
    return conv.emit(op, [x], node, shape, dtype, value=float(c))
