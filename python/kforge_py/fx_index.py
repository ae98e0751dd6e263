"""The index and mask ops of the fx importer: torch.argmax / argmin (int64 indices),
masked_fill and torch.where (bool masks, broadcast), torch.tril / triu (diagonal offset) and
F.cross_entropy / nn.CrossEntropyLoss (int64 class-index targets, mean or sum reduction).
What the spec cannot express (an argmax over the flattened tensor, class weights, label
smoothing, an ignore_index inside [0, C), a float mask, a scalar where branch that masked_fill
cannot take) raises Unsupported naming it."""
import math

from kforge_py import fx_compare, fx_mask
from kforge_py.fx_types import Tensor, Unsupported, is_scalar

FUNCTIONS = {"argmax", "argmin", "masked_fill", "where", "tril", "triu", "cross_entropy",
             "nll_loss"}


def _number(v, what):
    """A fill value: a finite number, +-inf, or a 0-d constant made in forward."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise Unsupported(f"{what} with a tensor value is not supported (a number is)")
    v = float(v)
    if math.isnan(v):
        raise Unsupported(f"{what} with the value NaN is not supported")
    return "inf" if v == math.inf else "-inf" if v == -math.inf else v


def _mask(conv, v, what):
    m = conv.tensor(v, f"the {what}")
    if m.dtype != "bool":
        raise Unsupported(f"the {what} must be a bool tensor; {m.name} is {m.dtype} "
                          "(compare it, e.g. mask != 0, or .bool() it in get_inputs)")
    return m


def convert(conv, node, name, args, kw, shape, dtype):
    def get(i, key, default=None):
        return args[i] if len(args) > i else kw.get(key, default)

    def emit(op, inputs, **attrs):
        return conv.emit(op, inputs, node, shape, dtype, **attrs)

    if name in ("argmax", "argmin"):
        x = conv.tensor(get(0, "input"))
        dim = get(1, "dim")
        if dim is None:
            raise Unsupported(f"{name} without dim (over the flattened tensor) is not supported")
        return emit(name, [x], axis=conv.axis(dim, x), keepdim=True if get(2, "keepdim") else None)
    if name == "masked_fill":
        x = conv.tensor(get(0, "input"))
        if fx_compare.is_indicator(conv, get(1, "mask")):  # x.masked_fill(x < 0, 0)
            return fx_compare.where(conv, node, get(1, "mask"), get(2, "value"), x, shape, dtype)
        m = _mask(conv, get(1, "mask"), "masked_fill mask")
        return emit("masked_fill", [x, m], value=_number(get(2, "value"), "masked_fill"))
    if name == "where":
        c, a, b = get(0, "condition"), get(1, "input"), get(2, "other")
        if a is None or b is None:
            raise Unsupported("torch.where(condition) (the indices of the true elements) is not "
                              "supported")
        if fx_compare.is_indicator(conv, c):  # torch.where(x > 0, x, 0.1 * x)
            return fx_compare.where(conv, node, c, a, b, shape, dtype)
        c = _mask(conv, c, "where condition")
        if is_scalar(a) or (isinstance(a, float) and math.isinf(a)):
            if is_scalar(b):
                raise Unsupported("torch.where with two scalar branches is not supported")
            return emit("masked_fill", [conv.tensor(b), c], value=_number(a, "torch.where"))
        if is_scalar(b) or (isinstance(b, float) and math.isinf(b)):
            if c.name in conv.params:  # a constant: ~c structured by fx_mask, else refused
                return emit("masked_fill", [conv.tensor(a), c], value=_number(b, "torch.where"),
                            **{fx_mask.NEGATED: True})
            raise Unsupported("torch.where(c, x, scalar) is not supported; write it as "
                              "x.masked_fill(~c, scalar) with the mask negated in get_inputs, or "
                              "torch.where(c, scalar, x)")
        return emit("where", [c, conv.tensor(a), conv.tensor(b)])
    if name in ("tril", "triu"):
        x = conv.tensor(get(0, "input"))
        d = int(get(1, "diagonal", 0))
        return emit(name, [x], diagonal=d if d != 0 else None)
    if name == "cross_entropy":
        return cross_entropy(conv, node, get(0, "input"), get(1, "target"), get(2, "weight"),
                             get(4, "ignore_index", -100), get(6, "reduction", "mean"),
                             get(7, "label_smoothing", 0.0), shape, dtype)
    if name == "nll_loss":
        return nll_loss(conv, node, get(0, "input"), get(1, "target"), get(2, "weight"),
                        get(4, "ignore_index", -100), get(6, "reduction", "mean"), shape, dtype)
    raise Unsupported(f"{name} is not supported (node {node.name})")


def nll_loss(conv, node, log_probs, target, weight, ignore_index, reduction, shape, dtype):
    """F.nll_loss(y, t) = -mean(y[i, t_i]) (or the sum) as cross_entropy(y, t) (the mean of
    logsumexp(y_i) - y_i[t_i]) less the mean of logsumexp(y_i): exact, and for the log_softmax
    that nll_loss reads that logsumexp is 0. What cross_entropy refuses (class weights, an
    ignore_index in [0, C), reduction 'none') is refused alike."""
    what = "nll_loss"
    x = conv.tensor(log_probs, "nll_loss's input")
    try:
        ce = cross_entropy(conv, node, x, target, weight, ignore_index, reduction, 0.0, shape,
                           dtype)
    except Unsupported as e:
        raise Unsupported(str(e).replace("cross_entropy", what)) from e
    lse = conv.emit("logsumexp", [x], node, x.shape[:1], dtype, False, axis=-1)
    m = conv.emit("mean" if reduction == "mean" else "sum", [lse], node, shape, dtype, False,
                  axis=0)
    return conv.emit("sub", [ce, m], node, shape, dtype)


def cross_entropy(conv, node, logits, target, weight, ignore_index, reduction, label_smoothing,
                  shape, dtype):
    """mean (or sum) over the rows of logsumexp(row) - row[target]. Targets are class indices in
    [0, C): kforge draws them there, and a target outside (ignore_index's -100 included) is an
    error of the interpreter, so the default ignore_index never applies."""
    x, t = conv.tensor(logits, "the logits"), conv.tensor(target, "the targets")
    if weight is not None:
        raise Unsupported("cross_entropy with class weights is not supported")
    if label_smoothing:
        raise Unsupported("cross_entropy with label_smoothing is not supported")
    if t.dtype not in ("i32", "i64"):
        raise Unsupported(f"cross_entropy with {t.dtype} targets (class probabilities) is not "
                          "supported; targets must be int64 class indices")
    if len(x.shape) != 2:
        raise Unsupported(f"cross_entropy over logits of rank {len(x.shape)} is not supported "
                          "(the spec takes [N, C])")
    if 0 <= ignore_index < x.shape[1]:
        raise Unsupported(f"cross_entropy with ignore_index {ignore_index} (a class in [0, C)) "
                          "is not supported")
    if reduction not in ("mean", "sum"):
        raise Unsupported(f"cross_entropy with reduction={reduction!r} is not supported "
                          "(mean and sum are)")
    loss = conv.emit("cross_entropy", [x, t], node, shape, dtype, final=reduction == "mean")
    if reduction == "mean":
        return loss
    return conv.emit("scale", [loss], node, shape, dtype, value=float(x.shape[0]))


def loss_module(conv, node, mod):
    """nn.CrossEntropyLoss / nn.NLLLoss with their settings."""
    shape, dtype = conv.meta(node)
    args = [conv.value(a) for a in node.args]
    kw = {k: conv.value(v) for k, v in node.kwargs.items()}
    logits = args[0] if args else kw.get("input")
    target = args[1] if len(args) > 1 else kw.get("target")
    if type(mod).__name__ == "NLLLoss":
        return nll_loss(conv, node, logits, target, mod.weight, mod.ignore_index, mod.reduction,
                        shape, dtype)
    return cross_entropy(conv, node, logits, target, mod.weight, mod.ignore_index,
                         mod.reduction, mod.label_smoothing, shape, dtype)


def is_loss_module(mod):
    return type(mod).__name__ in ("CrossEntropyLoss", "NLLLoss") and \
        type(mod).__module__.startswith("torch.")


def run_spec_op(torch, op, a):
    """spec_torch's mapping of these ops (PyTorch's own definitions), or None for other ops."""
    k = op["op"]
    if k in ("argmax", "argmin"):
        return getattr(torch, k)(a[0], op.get("axis", -1), keepdim=op.get("keepdim", False))
    if k == "masked_fill":
        v = float(op["value"])  # a number, or "inf" / "-inf" as text
        if "mask" in op:  # structured (fx_mask): a triangle of the last two dims
            r, c = a[0].shape[-2], a[0].shape[-1]
            ones = torch.ones(r, c, dtype=torch.bool, device=a[0].device)
            return a[0].masked_fill(getattr(torch, op["mask"])(ones, op.get("diagonal", 0)), v)
        return a[0].masked_fill(a[1], v)
    if k == "where":
        return torch.where(a[0], a[1], a[2])
    if k in ("tril", "triu"):
        return getattr(torch, k)(a[0], op.get("diagonal", 0))
    if k == "cross_entropy":
        return torch.nn.functional.cross_entropy(a[0], a[1].long())
    return None


def index_bound(spec, name):
    """C where `name` is cross_entropy's targets (its values are class indices in [0, C))."""
    for op in spec.get("graph", []):
        if op["op"] == "cross_entropy" and op["inputs"][1] == name:
            logits = op["inputs"][0]
            if logits in spec.get("inputs", {}):
                last = spec["inputs"][logits]["shape"][-1]
                return spec["dims"][last] if isinstance(last, str) else int(last)
            return None
    return None


_ = Tensor  # the value type these converters return (fx_types)
