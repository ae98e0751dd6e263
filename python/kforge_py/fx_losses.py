"""Loss functions and their modules -> spec ops (used by fx_ops.convert and
fx_import.Converter.call_module): F.mse_loss / l1_loss / smooth_l1_loss / huber_loss,
cosine_similarity, triplet_margin_loss and kl_div, each written as the element-wise ops and
reductions it equals, and nn.MSELoss ... KLDivLoss as the functional form with the module's
settings."""
import torch

from kforge_py.fx_chains import reduce_chain
from kforge_py.fx_types import Unsupported, is_scalar


def _broadcast(conv, node, a, b, what):
    """The broadcast shape of tensors a and b (PyTorch's rules), or Unsupported naming `what`."""
    try:
        return tuple(torch.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    except RuntimeError:
        raise Unsupported(f"{what}: shapes {list(a.shape)} and {list(b.shape)} do not broadcast "
                          f"(node {node.name})")


def pointwise_loss(conv, node, name, args, kw, shape, dtype):
    """F.mse_loss / l1_loss / smooth_l1_loss / huber_loss(input, target, reduction) as ops the
    spec has: d = input - target, then d^2, |d|, or the Huber branch without a select,
    c2 * m^2 + c1 * (|d| - m) with m = min(|d|, k) (smooth_l1: k = beta, c2 = 0.5 / beta, c1 = 1;
    huber: k = delta, c2 = 0.5, c1 = delta), exact on both sides of k; then a mean or sum over all
    elements (a reduction over every axis, one value) or none."""
    def get(i, key, default=None):
        return args[i] if len(args) > i else kw.get(key, default)
    x = conv.tensor(get(0, "input"), f"the {name} input")
    y = conv.tensor(get(1, "target"), f"the {name} target")
    if kw.get("weight") is not None:
        raise Unsupported(f"{name} with a weight is not supported")
    if kw.get("size_average") is not None or kw.get("reduce") is not None:
        raise Unsupported(f"{name} with the deprecated size_average / reduce is not supported")
    reduction = kw.get("reduction", "mean")
    if reduction not in ("mean", "sum", "none"):
        raise Unsupported(f"{name} with reduction={reduction!r} is not supported")
    full = _broadcast(conv, node, x, y, name)
    k = 0.0
    if name in ("smooth_l1_loss", "huber_loss"):
        key = "beta" if name == "smooth_l1_loss" else "delta"
        k = kw.get(key, 1.0)
        if not is_scalar(k) or k < 0 or (name == "huber_loss" and k == 0):
            raise Unsupported(f"{name} with {key} = {k!r} is not supported")
        k = float(k)  # smooth_l1 with beta 0 is the l1 loss
    last = reduction == "none"  # the element-wise loss is the node's output
    t = conv.emit("sub", [x, y], node, full, dtype, False)
    t = conv.emit("square" if name == "mse_loss" else "abs", [t], node, full, dtype,
                  last and k == 0)
    if k > 0:
        c2, c1 = (0.5 / k, 1.0) if name == "smooth_l1_loss" else (0.5, k)
        m = conv.emit("min_scalar", [t], node, full, dtype, False, value=k)
        q = conv.emit("square", [m], node, full, dtype, False)
        q = conv.emit("scale", [q], node, full, dtype, False, value=c2)
        r = conv.emit("sub", [t, m], node, full, dtype, False)
        if c1 != 1.0:
            r = conv.emit("scale", [r], node, full, dtype, False, value=c1)
        t = conv.emit("add", [q, r], node, full, dtype, last)
    if last:
        return t
    return reduce_chain(conv, node, reduction, t, None, False, shape, dtype)


def cosine_similarity(conv, node, args, kw, shape, dtype):
    """F.cosine_similarity(x1, x2, dim, eps) = sum(x1 * x2) / (max(|x1|, eps) * max(|x2|, eps))
    over `dim` (PyTorch clamps each norm on its own), as ops the spec has: three sums over the
    dim (of x1 * x2, x1^2, x2^2), two sqrt, two max_scalar, a mul and a div."""
    def get(i, key, default=None):
        return args[i] if len(args) > i else kw.get(key, default)
    a = conv.tensor(get(0, "x1"), "the cosine_similarity input")
    b = conv.tensor(get(1, "x2"), "the cosine_similarity input")
    dim, eps = get(2, "dim", 1), get(3, "eps", 1e-8)
    if not is_scalar(eps) or eps < 0:
        raise Unsupported(f"cosine_similarity with eps = {eps!r} is not supported")
    if tuple(a.shape) != tuple(b.shape):
        raise Unsupported(f"cosine_similarity of shapes {list(a.shape)} and {list(b.shape)} "
                          "(broadcast operands) is not supported")
    rank = len(a.shape)
    d = conv.axis(dim, a) % rank

    def total(t):
        return conv.emit("sum", [t], node, tuple(shape), dtype, False, axis=d, keepdim=False)

    def norm(x):
        n = conv.emit("sqrt", [total(conv.emit("square", [x], node, x.shape, dtype, False))],
                      node, tuple(shape), dtype, False)
        return conv.emit("max_scalar", [n], node, tuple(shape), dtype, False, value=float(eps)) \
            if eps else n
    dot = total(conv.emit("mul", [a, b], node, a.shape, dtype, False))
    den = conv.emit("mul", [norm(a), norm(b)], node, tuple(shape), dtype, False)
    return conv.emit("div", [dot, den], node, tuple(shape), dtype)


def triplet_margin_loss(conv, node, args, kw, shape, dtype):
    """F.triplet_margin_loss(anchor, positive, negative, margin, p=2, eps, swap=False) =
    reduce(max(d(a, pos) - d(a, neg) + margin, 0)) with PyTorch's pairwise distance
    d(x, y) = ||x - y + eps||_2 over the last dim, as ops the spec has."""
    def get(i, key, default=None):
        return args[i] if len(args) > i else kw.get(key, default)
    a = conv.tensor(get(0, "anchor"), "the triplet_margin_loss anchor")
    pos = conv.tensor(get(1, "positive"), "the triplet_margin_loss positive")
    neg = conv.tensor(get(2, "negative"), "the triplet_margin_loss negative")
    margin, p, eps = get(3, "margin", 1.0), get(4, "p", 2), get(5, "eps", 1e-6)
    if get(6, "swap", False):
        raise Unsupported("triplet_margin_loss with swap=True is not supported")
    if p not in (2, 2.0):
        raise Unsupported(f"triplet_margin_loss with p = {p!r} is not supported (2 is)")
    if kw.get("size_average") is not None or kw.get("reduce") is not None:
        raise Unsupported("triplet_margin_loss with the deprecated size_average / reduce is "
                          "not supported")
    reduction = kw.get("reduction", "mean")
    if reduction not in ("mean", "sum", "none"):
        raise Unsupported(f"triplet_margin_loss with reduction={reduction!r} is not supported")
    if not (tuple(a.shape) == tuple(pos.shape) == tuple(neg.shape)) or len(a.shape) < 1:
        raise Unsupported("triplet_margin_loss of tensors of different shapes is not supported")
    if not is_scalar(margin) or not is_scalar(eps):
        raise Unsupported("triplet_margin_loss with a tensor margin or eps is not supported")
    rows = tuple(a.shape[:-1])

    def distance(x, y):
        t = conv.emit("sub", [x, y], node, a.shape, dtype, False)
        if eps:
            t = conv.emit("add_scalar", [t], node, a.shape, dtype, False, value=float(eps))
        t = conv.emit("square", [t], node, a.shape, dtype, False)
        t = conv.emit("sum", [t], node, rows, dtype, False, axis=len(a.shape) - 1, keepdim=False)
        return conv.emit("sqrt", [t], node, rows, dtype, False)
    t = conv.emit("sub", [distance(a, pos), distance(a, neg)], node, rows, dtype, False)
    if margin:
        t = conv.emit("add_scalar", [t], node, rows, dtype, False, value=float(margin))
    t = conv.emit("max_scalar", [t], node, rows, dtype, reduction == "none", value=0.0)
    if reduction == "none" or not rows:
        return t
    return reduce_chain(conv, node, reduction, t, None, False, shape, dtype)


# the smallest target kl_div takes the log of: normal in f32 and bf16 (a flush-to-zero build
# keeps it), f16's smallest normal where that is larger
_XLOGY_FLOOR = {"f16": float(torch.finfo(torch.float16).tiny)}


def kl_div(conv, node, args, kw, shape, dtype):
    """F.kl_div(input, target, reduction, log_target) as ops the spec has. The element-wise loss
    is PyTorch's xlogy(t, t) - t * input, here t * (log(max(t, f)) - input) with f = 1e-30
    (f16: its smallest normal): target == 0 gives 0 like PyTorch's xlogy (0 * finite; without the
    clamp it would be 0 * log(0) = NaN), and for 0 < t < f the two differ by at most f / e.
    Known difference: a negative target gives NaN in PyTorch (log of a negative) and a finite
    value here; it cannot be detected at import (softmax targets, KernelBench's, are positive).
    log_target=True: exp(t) * (t - input), exact. Reductions: 'batchmean' is the sum over every
    axis but the first, then the mean over the first (sum / batch size, the size symbolic);
    'sum' and 'mean' over every axis; 'none'."""
    def get(i, key, default=None):
        return args[i] if len(args) > i else kw.get(key, default)
    x = conv.tensor(get(0, "input"), "the kl_div input")
    y = conv.tensor(get(1, "target"), "the kl_div target")
    if get(2, "size_average") is not None or get(3, "reduce") is not None:
        raise Unsupported("kl_div with the deprecated size_average / reduce is not supported")
    reduction, log_target = get(4, "reduction", "mean"), get(5, "log_target", False)
    if reduction not in ("batchmean", "mean", "sum", "none"):
        raise Unsupported(f"kl_div with reduction={reduction!r} is not supported")
    if log_target not in (True, False):
        raise Unsupported(f"kl_div with log_target = {log_target!r} is not supported")
    full = _broadcast(conv, node, x, y, "kl_div")
    if reduction == "batchmean" and (len(x.shape) != len(full) or not full or
                                     tuple(x.shape[:1]) != tuple(full[:1])):
        raise Unsupported(f"kl_div with reduction='batchmean' of an input of shape "
                          f"{list(x.shape)} broadcast to {list(full)} is not supported")
    last = reduction == "none"
    if log_target:
        d = conv.emit("sub", [y, x], node, full, dtype, False)
        w = conv.emit("exp", [y], node, tuple(y.shape), dtype, False)
    else:
        c = conv.emit("max_scalar", [y], node, tuple(y.shape), dtype, False,
                      value=_XLOGY_FLOOR.get(dtype, 1e-30))
        c = conv.emit("log", [c], node, tuple(y.shape), dtype, False)
        d = conv.emit("sub", [c, x], node, full, dtype, False)
        w = y
    t = conv.emit("mul", [w, d], node, full, dtype, last)
    if last:
        return t
    if reduction != "batchmean":
        return reduce_chain(conv, node, reduction, t, None, False, shape, dtype)
    if len(full) > 1:
        t = reduce_chain(conv, node, "sum", t, list(range(1, len(full))), False, tuple(full[:1]),
                         dtype, final=False)
    return conv.emit("mean", [t], node, shape, dtype, axis=0, keepdim=False)


LOSS_MODULES = {"MSELoss": "mse_loss", "L1Loss": "l1_loss", "SmoothL1Loss": "smooth_l1_loss",
                "HuberLoss": "huber_loss", "CosineSimilarity": "cosine_similarity",
                "TripletMarginLoss": "triplet_margin_loss", "KLDivLoss": "kl_div"}


def loss_module(conv, node, mod):
    """nn.MSELoss, L1Loss, SmoothL1Loss, HuberLoss, CosineSimilarity, TripletMarginLoss,
    KLDivLoss: the functional form with the module's settings."""
    name = LOSS_MODULES[type(mod).__name__]
    shape, dtype = conv.meta(node)
    args = [conv.value(a) for a in node.args]
    if node.kwargs:
        raise Unsupported(f"{type(mod).__name__.lower()} called with keyword arguments is not "
                          "supported")
    if name == "cosine_similarity":
        return cosine_similarity(conv, node, args, {"dim": mod.dim, "eps": mod.eps}, shape, dtype)
    kw = {"reduction": mod.reduction}
    if name == "kl_div":
        kw["log_target"] = mod.log_target
        return kl_div(conv, node, args, kw, shape, dtype)
    if name == "triplet_margin_loss":
        kw.update(margin=mod.margin, p=mod.p, eps=mod.eps, swap=mod.swap)
        return triplet_margin_loss(conv, node, args, kw, shape, dtype)
    if name == "smooth_l1_loss":
        kw["beta"] = mod.beta
    if name == "huber_loss":
        kw["delta"] = mod.delta
    return pointwise_loss(conv, node, name, args, kw, shape, dtype)
