"""PyTorch functions the spec has no op for, written as the spec ops they equal (used by
fx_ops.convert). Each decomposition is exact in real arithmetic and, rounded once per op in
f32, stays inside the fp32 tolerance the importer checks against PyTorch at fp64."""
import math

import torch
import torch.fx
import torch.nn.functional as F

from kforge_py import fx_shape
from kforge_py.fx_chains import hardsigmoid, reduce_chain
from kforge_py.fx_types import (ConstantTensor, Flipped, Tensor, Transposed, Unsupported,
                                is_scalar)

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
    h = hardsigmoid(conv, node, x, shape, dtype, final=False)
    return conv.emit("mul", [x, h], node, shape, dtype)


def _pixel_shuffle(conv, node, args, kw, x, shape, dtype, up):
    """F.pixel_shuffle / pixel_unshuffle (nn.PixelShuffle / PixelUnshuffle) as the reshape,
    permute, reshape that define them: [.., C*r*r, H, W] -> [.., C, r, r, H, W] ->
    [.., C, H, r, W, r] -> [.., C, H*r, W*r], and back."""
    key = "upscale_factor" if up else "downscale_factor"
    r = args[1] if len(args) > 1 else kw.get(key)
    if not isinstance(r, int) or isinstance(r, bool) or len(x.shape) < 3:
        raise Unsupported(f"pixel_{'un' * (not up)}shuffle with {key} {r!r} of a rank-"
                          f"{len(x.shape)} tensor is not supported")
    lead, (c, h, w) = tuple(x.shape[:-3]), x.shape[-3:]
    n = len(lead)
    if up:
        mid, perm = lead + (c // (r * r), r, r, h, w), [n, n + 3, n + 1, n + 4, n + 2]
    else:
        mid, perm = lead + (c, h // r, r, w // r, r), [n, n + 2, n + 4, n + 1, n + 3]
    perm = list(range(n)) + perm
    t = fx_shape.reshape_to(conv, node, x, mid, final=False)
    t = conv.emit("permute", [t], node, tuple(mid[i] for i in perm), dtype, False, dims=perm)
    return fx_shape.reshape_to(conv, node, t, shape)


@_decomposes("pixel_shuffle")
def pixel_shuffle(conv, node, args, kw, x, shape, dtype):
    return _pixel_shuffle(conv, node, args, kw, x, shape, dtype, True)


@_decomposes("pixel_unshuffle")
def pixel_unshuffle(conv, node, args, kw, x, shape, dtype):
    return _pixel_shuffle(conv, node, args, kw, x, shape, dtype, False)


@_decomposes("repeat", "tile")
def repeat(conv, node, args, kw, x, shape, dtype):
    """x.repeat(r0, r1, ..) / torch.tile(x, reps): a new axis of size 1 before each repeated
    dim, expanded to the count, merged with its dim: [s0, s1] -> [1, s0, s1] -> [r0, s0, s1]
    -> [r0 * s0, s1]."""
    reps = list(args[1:]) or list(kw.get("repeats", kw.get("dims", ())))
    if len(reps) == 1 and isinstance(reps[0], (list, tuple)):
        reps = list(reps[0])
    if not all(isinstance(r, int) and r >= 1 for r in reps):
        raise Unsupported(f"repeat / tile by {reps!r} is not supported (counts >= 1)")
    n = max(len(reps), len(x.shape))
    sizes = (1,) * (n - len(x.shape)) + tuple(x.shape)
    reps = (1,) * (n - len(reps)) + tuple(reps)
    spread, wide = [], []
    for r, d in zip(reps, sizes):
        spread += [1, d] if r > 1 else [d]
        wide += [r, d] if r > 1 else [d]
    t = fx_shape.reshape_to(conv, node, x, spread, final=False)
    if tuple(wide) != tuple(spread):
        t = fx_shape._emit_shaped(conv, "expand", t, node, tuple(wide), final=False)
    return fx_shape.reshape_to(conv, node, t, shape)


@_decomposes("interpolate", "upsample")
def interpolate(conv, node, args, kw, x, shape, dtype):
    """F.interpolate / nn.Upsample in mode "nearest" (or "nearest-exact") by whole factors:
    each spatial axis gets an axis of the factor after it, expanded and merged -
    [N, C, H, W] -> [N, C, H, 1, W, 1] -> [N, C, H, s, W, s] -> [N, C, H*s, W*s] (output i reads
    input i // s, what both modes compute for a whole factor). Other modes (bilinear, bicubic,
    ...) and fractional factors are refused by name."""
    mode = args[3] if len(args) > 3 else kw.get("mode", "nearest")
    spatial_in, spatial_out = x.shape[2:], tuple(shape[2:])
    if mode not in ("nearest", "nearest-exact"):
        raise Unsupported(f"interpolate / Upsample in mode {mode!r} is not supported (mode "
                          "'nearest' by whole factors is)")
    if len(spatial_in) != len(spatial_out) or not spatial_in or any(
            o % i for i, o in zip(spatial_in, spatial_out)):
        raise Unsupported(f"interpolate from {list(spatial_in)} to {list(spatial_out)} is not "
                          "supported (whole scale factors are)")
    spread, wide = list(x.shape[:2]), list(x.shape[:2])
    for i, o in zip(spatial_in, spatial_out):
        spread += [i, 1] if o > i else [i]
        wide += [i, o // i] if o > i else [i]
    t = fx_shape.reshape_to(conv, node, x, spread, final=False)
    if wide != spread:
        t = fx_shape._emit_shaped(conv, "expand", t, node, tuple(wide), final=False)
    return fx_shape.reshape_to(conv, node, t, shape)


@_decomposes("prelu")
def prelu(conv, node, args, kw, x, shape, dtype):
    """F.prelu(x, w) / nn.PReLU: relu(x) + w * min(x, 0) (exact: one term is 0), w one value or
    one per channel (dim 1 of x, its weight viewed as [C, 1, ..])."""
    w = conv.tensor(args[1] if len(args) > 1 else kw.get("weight"), "prelu's weight")
    n = 1
    for e in w.shape:
        n *= e
    if n != 1:
        if len(x.shape) < 2 or n != x.shape[1]:
            raise Unsupported(f"prelu with {n} weights on a tensor of shape {list(x.shape)} is "
                              "not supported (one, or one per channel of dim 1)")
        w = fx_shape.reshape_to(conv, node, w, (n,) + (1,) * (len(x.shape) - 2), final=False)
    r = conv.emit("relu", [x], node, shape, dtype, False)
    m = conv.emit("min_scalar", [x], node, shape, dtype, False, value=0.0)
    m = conv.emit("mul", [m, w], node, shape, dtype, False)
    return conv.emit("add", [r, m], node, shape, dtype)


@_decomposes("glu")
def glu(conv, node, args, kw, x, shape, dtype):
    """F.glu(x, dim): a * sigmoid(b), a and b the two halves of x along dim."""
    dim = args[1] if len(args) > 1 else kw.get("dim", -1)
    dim %= len(x.shape)
    n = x.shape[dim]
    if n % 2:
        raise Unsupported(f"glu over dim {dim} of odd size {n}")
    a = fx_shape.slice_op(conv, node, x, dim, 0, n // 2, 1, final=False)
    b = fx_shape.slice_op(conv, node, x, dim, n // 2, n, 1, final=False)
    g = conv.emit("sigmoid", [b], node, shape, dtype, False)
    return conv.emit("mul", [a, g], node, shape, dtype)


@_decomposes("addmm", "baddbmm", "addbmm")
def addmm(conv, node, args, kw, x, shape, dtype):
    """torch.addmm(input, m1, m2, beta, alpha) = beta * input + alpha * (m1 @ m2) (baddbmm on
    batches alike): a matmul (a transposed operand read as the matmul's transpose), scaled,
    then the add; addbmm sums the batch of products first."""
    m1, m2 = (args[i] if len(args) > i else kw.get(k) for i, k in ((1, "mat1"), (2, "mat2")))
    if node.target in ("baddbmm", "addbmm") or getattr(node.target, "__name__", "") in (
            "baddbmm", "addbmm"):
        m1 = args[1] if len(args) > 1 else kw.get("batch1")
        m2 = args[2] if len(args) > 2 else kw.get("batch2")
    beta, alpha = kw.get("beta", 1), kw.get("alpha", 1)
    attrs = {}
    if isinstance(m1, Transposed):
        m1, attrs["transpose_a"] = m1.tensor, True
    if isinstance(m2, Transposed):
        m2, attrs["transpose_b"] = m2.tensor, True
    m1, m2 = conv.tensor(m1, "addmm's mat1"), conv.tensor(m2, "addmm's mat2")
    rows = m1.shape[-1] if attrs.get("transpose_a") else m1.shape[-2]
    cols = m2.shape[-2] if attrs.get("transpose_b") else m2.shape[-1]
    lead = tuple(m1.shape[:-2])
    p = conv.emit("matmul", [m1, m2], node, lead + (rows, cols), dtype, False, **attrs)
    if len(p.shape) == 3 and len(shape) == 2:  # addbmm: the products summed over the batch
        p = conv.emit("sum", [p], node, shape, dtype, False, axis=0)
    if alpha != 1:
        p = conv.emit("scale", [p], node, p.shape, dtype, False, value=float(alpha))
    if beta == 0:
        return p
    if beta != 1:
        x = conv.emit("scale", [x], node, x.shape, dtype, False, value=float(beta))
    return conv.emit("add", [p, x], node, shape, dtype)


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
    made in forward, or zeros_like / full_like of a tensor), in either order: max_scalar /
    min_scalar. Two tensors (broadcast like add): maximum / minimum, NaN from either side as
    torch.maximum; fmax / fmin of two tensors ignore a NaN, which no spec op does (refused)."""
    is_max = name in ("max", "maximum", "fmax")
    if isinstance(a, (Tensor, Transposed, Flipped)) and isinstance(b, (Tensor, Transposed,
                                                                      Flipped)):
        if name in ("fmax", "fmin"):
            raise Unsupported(f"{name} of two tensors (a NaN operand ignored) is not supported; "
                              f"torch.{'maximum' if is_max else 'minimum'} is")
        return conv.emit("maximum" if is_max else "minimum", [conv.tensor(a), conv.tensor(b)],
                         node, shape, dtype)
    x, c = (b, a) if is_scalar(a) else (a, b)
    x = conv.tensor(x)
    if not is_scalar(c):
        raise Unsupported(f"{name} with {c!r} is not supported")
    if tuple(x.shape) != tuple(shape):
        raise Unsupported(f"{name} of a tensor of shape {list(x.shape)} and a constant of shape "
                          f"{list(shape)} (a filled tensor that broadcasts it) is not supported")
    op = "max_scalar" if is_max else "min_scalar"
    return conv.emit(op, [x], node, shape, dtype, value=float(c))


# ---- batch and instance normalization ----
# No spec op normalizes over dim 0 and the spatial dims per channel (batch norm): it is written
# as the two-pass variance (as `variance` above) and the normalize, with the per-channel affine
# parameters fed as [C, 1, ...] params. Instance norm is layer_norm over the spatial dims (one
# row per sample and channel: exact, one row kernel, and its dims shrink for the import check,
# which group_norm with num_groups = C does not). Running-statistics updates (training mode)
# change module buffers, never the output: they are not reproduced.

def channel_shape(x):
    """The shape of a per-channel tensor that broadcasts against X [N, C, *] on dim 1."""
    return (x.shape[1],) + (1,) * (len(x.shape) - 2)


def channel_param(conv, node, arg, t, x, fn):
    """The per-channel tensor `t` [C] (fx argument `arg`) as a param [C, 1, ...] that broadcasts
    over X's dim 1; only a module parameter or buffer (a get_attr node) can be fed so."""
    want = channel_shape(x)
    if t is None or tuple(t.shape) == want:
        return t
    t = conv.tensor(t, f"a {fn} parameter")
    if tuple(t.shape) != (x.shape[1],):
        raise Unsupported(f"{fn} parameter {t.name} has shape {list(t.shape)}, expected "
                          f"[{x.shape[1]}] (the channels of dim 1)")
    if not (isinstance(arg, torch.fx.Node) and arg.op == "get_attr"):
        raise Unsupported(f"{fn} with per-channel tensor {t.name} that is not a module parameter "
                          f"or buffer is not supported (the spec cannot reshape it to "
                          f"{list(want)})")
    attr = conv.gm
    for part in arg.target.split("."):
        attr = getattr(attr, part)
    drop_unread(conv, node, arg, t)  # the [C] form, where nothing else reads it
    return conv.param(arg.target, attr, want)


def drop_unread(conv, node, arg, t):
    """Removes the param input `t` that fx argument `arg` (a get_attr node) made, where no node
    but `node` reads that attribute: `node` does not read it as it is (a spec input nothing
    reads is an error)."""
    if not (isinstance(arg, torch.fx.Node) and arg.op == "get_attr") or \
            not isinstance(t, Tensor) or t.name not in conv.params:
        return
    readers = set()
    for other in conv.gm.graph.nodes:
        if other.op == "get_attr" and other.target == arg.target:
            readers.update(other.users)
    if readers == {node}:
        del conv.inputs[t.name], conv.params[t.name]
        conv.used.discard(t.name)


def normalize_batch_stats(conv, node, x, w, b, eps, shape, dtype):
    """(x - mean) * rsqrt(var + eps) [* w] [+ b], mean and biased var per channel over every dim
    but dim 1 (batch norm in training mode); w and b are [C, 1, ...] or None."""
    rank = len(x.shape)
    dims = [d for d in range(rank) if d != 1]
    kept = tuple(s if i == 1 else 1 for i, s in enumerate(x.shape))
    full = tuple(x.shape)
    m = reduce_chain(conv, node, "mean", x, dims, True, kept, dtype, final=False)
    v = conv.emit("sub", [x, m], node, full, dtype, False)
    v = conv.emit("square", [v], node, full, dtype, False)
    v = reduce_chain(conv, node, "mean", v, dims, True, kept, dtype, final=False)
    # x - m again rather than the value above: each is read once, so neither is stored (the
    # first is the variance reduction's prologue, the second starts the normalizing map)
    d = conv.emit("sub", [x, m], node, full, dtype, False)
    return _scale_shift(conv, node, d, v, w, b, eps, kept, shape, dtype)


def normalize_running_stats(conv, node, x, mean, var, w, b, eps, shape, dtype):
    """(x - running_mean) * rsqrt(running_var + eps) [* w] [+ b] (batch norm in eval mode): a
    per-channel affine; every per-channel tensor is [C, 1, ...]."""
    d = conv.emit("sub", [x, mean], node, tuple(x.shape), dtype, False)
    return _scale_shift(conv, node, d, var, w, b, eps, tuple(var.shape), shape, dtype)


def _scale_shift(conv, node, d, var, w, b, eps, small, shape, dtype):
    """d * (rsqrt(var + eps) [* w]) [+ b]: the per-channel factor is formed on the small
    tensor, so that the full-size tensor sees one multiply (and one add)."""
    r = conv.emit("add_scalar", [var], node, small, dtype, False, value=float(eps)) if eps else var
    r = conv.emit("rsqrt", [r], node, small, dtype, False)
    if w is not None:
        r = conv.emit("mul", [r, w], node, small, dtype, False)
    y = conv.emit("mul", [d, r], node, shape, dtype, b is None)
    if b is not None:
        y = conv.emit("add", [y, b], node, shape, dtype)
    return y


def batch_norm_of(conv, node, x, mean, var, w, b, batch_stats, eps, shape, dtype, fn):
    """Batch norm of X [N, C, *] (rank 2 to 5) with per-channel tensors already [C, 1, ...]."""
    if not 2 <= len(x.shape) <= 5:
        raise Unsupported(f"{fn} of a rank-{len(x.shape)} input is not supported (expected "
                          "[N, C], [N, C, L], [N, C, H, W] or [N, C, D, H, W])")
    if not is_scalar(eps) or eps < 0:
        raise Unsupported(f"{fn} with eps {eps!r} is not supported")
    if batch_stats:
        return normalize_batch_stats(conv, node, x, w, b, eps, shape, dtype)
    if mean is None or var is None:
        raise Unsupported(f"{fn} in eval mode without running_mean and running_var is not "
                          "supported")
    return normalize_running_stats(conv, node, x, mean, var, w, b, eps, shape, dtype)


def instance_norm_of(conv, node, x, w, b, eps, shape, dtype, fn):
    """Instance norm of X [N, C, *]: layer_norm over the spatial dims (each sample and channel
    one row), then the per-channel affine w, b ([C, 1, ...] or None)."""
    if len(x.shape) < 3:
        raise Unsupported(f"{fn} of a rank-{len(x.shape)} input is not supported (expected "
                          "[N, C, *spatial])")
    if not is_scalar(eps) or eps < 0:
        raise Unsupported(f"{fn} with eps {eps!r} is not supported")
    affine = w is not None or b is not None
    y = conv.emit("layer_norm", [x], node, shape, dtype, not affine,
                  normalized_shape=list(x.shape[2:]), eps=float(eps))
    if w is not None:
        y = conv.emit("mul", [y, w], node, shape, dtype, b is None)
    if b is not None:
        y = conv.emit("add", [y, b], node, shape, dtype)
    return y


def batch_norm_module(conv, node, mod, x, shape, dtype):
    """nn.BatchNorm1d/2d/3d: batch statistics in training mode (or without running stats),
    else the running statistics; weight and bias when affine."""
    p, cs = node.target, channel_shape(x)
    w = b = mean = var = None
    if mod.affine:
        w, b = conv.param(p + ".weight", mod.weight, cs), conv.param(p + ".bias", mod.bias, cs)
    batch_stats = mod.training or mod.running_mean is None
    if not batch_stats:
        mean = conv.param(p + ".running_mean", mod.running_mean, cs)
        var = conv.param(p + ".running_var", mod.running_var, cs)
    if len(x.shape) >= 2 and x.shape[1] != mod.num_features:
        raise Unsupported(f"{type(mod).__name__.lower()} of {mod.num_features} features on an "
                          f"input with {x.shape[1]} channels (module {p})")
    return batch_norm_of(conv, node, x, mean, var, w, b, batch_stats, mod.eps, shape, dtype,
                         type(mod).__name__.lower())


def instance_norm_module(conv, node, mod, x, shape, dtype):
    """nn.InstanceNorm1d/2d/3d without running statistics; weight and bias when affine."""
    name = type(mod).__name__.lower()
    if mod.track_running_stats:
        raise Unsupported(f"{name} with track_running_stats is not supported "
                          f"(module {node.target})")
    if len(x.shape) < 3:
        raise Unsupported(f"{name} on an unbatched input is not supported "
                          f"(module {node.target})")
    w = b = None
    if mod.affine:
        cs = channel_shape(x)
        w = conv.param(node.target + ".weight", mod.weight, cs)
        b = conv.param(node.target + ".bias", mod.bias, cs)
    return instance_norm_of(conv, node, x, w, b, mod.eps, shape, dtype, name)


# F.batch_norm / F.instance_norm and torch.batch_norm / torch.instance_norm (the aten order)
_NORM_SIGNATURES = {
    "F.batch_norm": ("input", "running_mean", "running_var", "weight", "bias", "training",
                     "momentum", "eps"),
    "torch.batch_norm": ("input", "weight", "bias", "running_mean", "running_var", "training",
                         "momentum", "eps", "cudnn_enabled"),
    "F.instance_norm": ("input", "running_mean", "running_var", "weight", "bias",
                        "use_input_stats", "momentum", "eps"),
    "torch.instance_norm": ("input", "weight", "bias", "running_mean", "running_var",
                            "use_input_stats", "momentum", "eps", "cudnn_enabled"),
}
_NORM_DEFAULTS = {"training": False, "use_input_stats": True, "eps": 1e-5}


def _norm_arguments(node, args, kw, fn):
    """name -> (converted value, fx argument) of a batch_norm / instance_norm call."""
    key = {F.batch_norm: "F.batch_norm", torch.batch_norm: "torch.batch_norm",
           F.instance_norm: "F.instance_norm",
           torch.instance_norm: "torch.instance_norm"}.get(node.target)
    if key is None:
        raise Unsupported(f"{fn} as {node.op} {node.target!r} is not supported")
    names = _NORM_SIGNATURES[key]
    out = {}
    for i, n in enumerate(names):
        if i < len(args):
            out[n] = (args[i], node.args[i])
        elif n in kw:
            out[n] = (kw[n], node.kwargs[n])
        else:
            out[n] = (_NORM_DEFAULTS.get(n), None)
    return out


@_decomposes("batch_norm")
def batch_norm(conv, node, args, kw, x, shape, dtype):
    """F.batch_norm (torch.batch_norm): batch statistics when training=True, else the running
    statistics (module buffers); momentum only updates those buffers (not reproduced)."""
    a = _norm_arguments(node, args, kw, "batch_norm")
    training = a["training"][0]
    if not isinstance(training, bool):
        raise Unsupported(f"batch_norm with training={training!r} is not supported")

    def per_channel(n):
        return channel_param(conv, node, a[n][1], a[n][0], x, "batch_norm")
    w, b = per_channel("weight"), per_channel("bias")
    mean = var = None
    if not training:
        mean, var = per_channel("running_mean"), per_channel("running_var")
    else:  # the running statistics are only updated (not reproduced), never read
        for n in ("running_mean", "running_var"):
            drop_unread(conv, node, a[n][1], a[n][0])
    return batch_norm_of(conv, node, x, mean, var, w, b, training, a["eps"][0], shape, dtype,
                         "batch_norm")


@_decomposes("instance_norm")
def instance_norm(conv, node, args, kw, x, shape, dtype):
    """F.instance_norm (torch.instance_norm) with use_input_stats (the default): statistics per
    sample and channel over the spatial dims."""
    a = _norm_arguments(node, args, kw, "instance_norm")
    if a["use_input_stats"][0] is not True:
        raise Unsupported("instance_norm with use_input_stats=False (running statistics) is not "
                          "supported")
    w = channel_param(conv, node, a["weight"][1], a["weight"][0], x, "instance_norm")
    b = channel_param(conv, node, a["bias"][1], a["bias"][0], x, "instance_norm")
    return instance_norm_of(conv, node, x, w, b, a["eps"][0], shape, dtype, "instance_norm")
