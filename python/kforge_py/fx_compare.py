"""Comparisons and the logic of their results in the fx importer: `x > 0`, `torch.lt(a, b)`,
`a == b`, `(x > 0) & (x < 1)`, `~m`, and what reads them - torch.where, masked_fill, a cast
(`.float()`, `.to(x.dtype)`, `.type_as(x)`) or a product with a float tensor.

The spec has no comparison op and no bool-producing op. A comparison becomes its 0/1 indicator
in the compared operand's float dtype, computed exactly from spec ops on d = a - b (0 only where
a == b for finite values, subnormals kept): gt = clamp(sign(d), 0, 1), lt = clamp(-sign(d), 0,
1), ge = clamp(sign(d) + 1, 0, 1), le = clamp(1 - sign(d), 0, 1), ne = |sign(d)|, eq = 1 - ne.
The indicator is marked as one (Converter.indicators) and its readers take it for the bool it
stands for: torch.where(c, a, b) = a * c + b * (1 - c) (exact for finite a and b: one term is 0
and the other is a or b times 1), an infinite branch where(c, -inf, x) = x + log(1 - c) (log
gives exactly 0 or -inf; inf * 0 would be NaN), masked_fill(x, c, v) = where(c, v, x); & is a
product, | a maximum, ~ is 1 - c; a cast to the indicator's dtype and `x * c` read it as the
number it is. Refused by name: an indicator returned as an output (PyTorch's is bool) or counted
(PyTorch sums a bool in int64), a NaN branch."""
import math
import operator

from kforge_py.fx_types import Tensor, Unsupported, is_scalar

OPERATORS = {operator.gt: "gt", operator.lt: "lt", operator.ge: "ge", operator.le: "le",
             operator.eq: "eq", operator.ne: "ne", operator.and_: "and", operator.or_: "or",
             operator.invert: "not"}
FUNCTIONS = {"gt": "gt", "greater": "gt", "lt": "lt", "less": "lt", "ge": "ge",
             "greater_equal": "ge", "le": "le", "less_equal": "le", "eq": "eq", "ne": "ne",
             "not_equal": "ne", "logical_and": "and", "logical_or": "or", "logical_not": "not",
             "bitwise_and": "and", "bitwise_or": "or", "bitwise_not": "not"}
FLOATS = ("f32", "f64", "f16", "bf16")


def kind_of(node, name):
    """The comparison or logic kind of an fx node ("gt", ..., "and", "or", "not"), or None."""
    return OPERATORS.get(node.target) if not isinstance(node.target, str) and \
        node.target in OPERATORS else FUNCTIONS.get(name)


def is_indicator(conv, v):
    return isinstance(v, Tensor) and v.name in conv.indicators


def convert(conv, node, kind):
    """The indicator Tensor of a comparison / logic node."""
    args = [conv.value(a) for a in node.args]
    kw = {k: conv.value(v) for k, v in node.kwargs.items()}
    shape = conv.meta(node)[0]
    a = args[0] if args else kw.get("input")
    if kind == "not":
        m = _operand_indicator(conv, a, "~")
        return _mark(conv, _one_minus(conv, node, m))
    b = args[1] if len(args) > 1 else kw.get("other")
    if kind in ("and", "or"):
        ma, mb = _operand_indicator(conv, a, kind), _operand_indicator(conv, b, kind)
        op = "mul" if kind == "and" else "maximum"
        return _mark(conv, conv.emit(op, [ma, mb], node, shape, ma.dtype))
    if is_scalar(a) and is_scalar(b):
        raise Unsupported(f"{kind} of two constants is not supported")
    a, b = (v if is_scalar(v) else conv.tensor(v, f"an operand of {kind}") for v in (a, b))
    for t in (a, b):
        if not is_scalar(t) and (t.dtype not in FLOATS or t.name in conv.indicators):
            what = "bool" if t.name in conv.indicators else t.dtype
            raise Unsupported(f"a comparison ({kind}) of the {what} tensor {t.name} is not "
                              "supported (of a float tensor with a number or a float tensor is)")
    dtype = (a if not is_scalar(a) else b).dtype
    if is_scalar(b):
        d = a if float(b) == 0 else conv.emit("add_scalar", [a], node, a.shape, dtype, False,
                                              value=-float(b))
    elif is_scalar(a):
        n = conv.emit("neg", [b], node, b.shape, dtype, False)
        d = n if float(a) == 0 else conv.emit("add_scalar", [n], node, b.shape, dtype, False,
                                              value=float(a))
    else:
        d = conv.emit("sub", [a, b], node, shape, dtype, False)
    s = conv.emit("sign", [d], node, shape, dtype, False)
    if kind in ("ne", "eq"):
        m = conv.emit("abs", [s], node, shape, dtype, kind == "ne")
        return _mark(conv, m if kind == "ne" else _one_minus(conv, node, m))
    if kind in ("lt", "le"):
        s = conv.emit("neg", [s], node, shape, dtype, False)
    if kind in ("ge", "le"):
        s = conv.emit("add_scalar", [s], node, shape, dtype, False, value=1.0)
    return _mark(conv, conv.emit("clamp", [s], node, shape, dtype, min=0.0, max=1.0))


def where(conv, node, c, a, b, shape, dtype):
    """torch.where(c, a, b) with c an indicator: a * c + b * (1 - c); a and b tensors or finite
    numbers."""
    infinite = [isinstance(v, (int, float)) and math.isinf(v) for v in (a, b)]
    if any(infinite):
        if all(infinite) or any(isinstance(v, float) and math.isnan(v) for v in (a, b)):
            raise Unsupported("torch.where / masked_fill under a comparison's mask with two "
                              "infinite values or NaN is not supported")
        # where(c, -inf, x) = x + log(1 - c): log gives 0 where c is 0 and -inf where it is 1
        v, x, m = (a, b, _one_minus(conv, node, c)) if infinite[0] else (b, a, c)
        x = conv.tensor(x, "a torch.where branch")
        lg = conv.emit("log", [m], node, m.shape, m.dtype, False)
        return conv.emit("add" if v < 0 else "sub", [x, lg], node, shape, dtype)
    for v in (a, b):
        if isinstance(v, float) and math.isnan(v):
            raise Unsupported("torch.where / masked_fill with NaN under a comparison's mask is "
                              "not supported")
    a, b = (v if is_scalar(v) else conv.tensor(v, "a torch.where branch") for v in (a, b))
    keep = _one_minus(conv, node, c)

    def term(v, m):
        if is_scalar(v):
            return conv.emit("scale", [m], node, m.shape, dtype, False, value=float(v))
        return conv.emit("mul", [conv.tensor(v), m], node, _broadcast(v.shape, m.shape), dtype,
                         False)

    ta, tb = term(a, c), term(b, keep)
    return conv.emit("add", [ta, tb], node, shape, dtype)


def _broadcast(x, y):
    n = max(len(x), len(y))
    x, y = (1,) * (n - len(x)) + tuple(x), (1,) * (n - len(y)) + tuple(y)
    return tuple(max(p, q) for p, q in zip(x, y))


def _operand_indicator(conv, v, what):
    t = conv.tensor(v, f"an operand of {what}")
    if t.name not in conv.indicators:
        raise Unsupported(f"{what} of the {t.dtype} tensor {t.name} is not supported (only of "
                          "comparisons, such as (x > 0) & (x < 1))")
    return t


def _one_minus(conv, node, m):
    n = conv.emit("neg", [m], node, m.shape, m.dtype, False)
    return conv.emit("add_scalar", [n], node, m.shape, m.dtype, False, value=1.0)


def _mark(conv, t):
    conv.indicators.add(t.name)
    return t
