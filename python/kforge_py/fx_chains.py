"""Op chains several converters emit (fx_ops, fx_decomp, fx_forms, fx_losses and the module
path of fx_import.Converter): a reduction over several axes as one-axis reductions, hardsigmoid
as a clamp chain, the ELU family as two branches of x. Each takes the converter `conv` (its
`emit`, `axis`) as an argument and imports no converter module."""


def reduce_chain(conv, node, op, x, dims, keepdim, shape, dtype, final=True):
    """A reduction over several axes as a chain of one-axis reductions (exact for sum, mean,
    max, min, and for logsumexp: the logsumexp over (i, j) is the logsumexp over i of the
    logsumexps over j, each shifted by its own maximum). `final`: the last one is the node's
    output."""
    rank = len(x.shape)
    if dims is None:
        dims = list(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    dims = sorted({d % rank for d in dims}, reverse=True)
    cur = x
    for i, d in enumerate(dims):
        last = i == len(dims) - 1
        cur_shape = list(cur.shape)
        cur_shape = cur_shape[:d] + ([1] if keepdim else []) + cur_shape[d + 1:]
        cur = conv.emit(op, [cur], node, tuple(cur_shape) if not last else shape, dtype,
                        final=last and final, axis=d, keepdim=bool(keepdim))
    return cur


def hardsigmoid(conv, node, x, shape, dtype, final=True):
    """relu6(x + 3) / 6 as clamp(x / 6 + 1/2, 0, 1): ops the spec has, one chain."""
    t = conv.emit("scale", [x], node, shape, dtype, False, value=1.0 / 6.0)
    t = conv.emit("add_scalar", [t], node, shape, dtype, False, value=0.5)
    return conv.emit("clamp", [t], node, shape, dtype, final, min=0.0, max=1.0)


SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805  # PyTorch's constants


def elu(conv, node, x, shape, dtype, kind, alpha=1.0):
    """scale * (max(0, x) + min(0, alpha * (exp(inner * x) - 1))) for `kind` "elu" (scale 1,
    inner 1), "selu" (PyTorch's alpha and scale; `alpha` ignored) or "celu" (inner 1 / alpha), as
    ops the spec has. Two branches of x: the planner keeps them in one kernel with named values
    (`let`), see docs/language.md."""
    scale, inner = 1.0, 1.0
    if kind == "selu":
        alpha, scale = SELU_ALPHA, SELU_SCALE
    elif kind == "celu":
        inner = 1.0 / alpha
    pos = conv.emit("relu", [x], node, shape, dtype, False)
    t = conv.emit("scale", [x], node, shape, dtype, False, value=inner) if inner != 1.0 else x
    t = conv.emit("exp", [t], node, shape, dtype, False)
    t = conv.emit("add_scalar", [t], node, shape, dtype, False, value=-1.0)
    t = conv.emit("scale", [t], node, shape, dtype, False, value=alpha)
    t = conv.emit("min_scalar", [t], node, shape, dtype, False, value=0.0)
    if scale == 1.0:
        return conv.emit("add", [pos, t], node, shape, dtype)
    t = conv.emit("add", [pos, t], node, shape, dtype, False)
    return conv.emit("scale", [t], node, shape, dtype, value=scale)
