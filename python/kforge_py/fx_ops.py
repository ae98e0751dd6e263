"""call_function / call_method fx nodes -> spec ops (used by fx_import.Converter): the dispatch
(convert) and the ops with no module of their own; losses are in fx_losses, decompositions in
fx_decomp, matrix-product forms in fx_forms, convolutions in fx_conv."""
import builtins
import operator

import torch

from kforge_py import fx_attention, fx_compare, fx_conv, fx_shape
from kforge_py import fx_pool
from kforge_py import fx_index
from kforge_py.fx_chains import elu, hardsigmoid, reduce_chain
from kforge_py.fx_decomp import CONSTANT_TENSORS, DECOMPOSED, constant_tensor, elementwise_bound
from kforge_py.fx_forms import FORMS, Diagonal, diag_matmul
from kforge_py.fx_losses import (cosine_similarity, kl_div, pointwise_loss,
                                 triplet_margin_loss)
from kforge_py.fx_types import (ConstantTensor, Flipped, MaxPair, Tensor, Transposed,
                                Unsupported, is_scalar)

UNARY = {"relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh", "silu": "silu", "mish": "mish",
         "exp": "exp", "log": "log", "neg": "neg", "negative": "neg", "abs": "abs",
         "sqrt": "sqrt", "rsqrt": "rsqrt", "square": "square", "erf": "erf",
         "special_erf": "erf", "log1p": "log1p", "special_log1p": "log1p", "expm1": "expm1",
         "special_expm1": "expm1", "sin": "sin", "cos": "cos", "sign": "sign",
         "reciprocal": "reciprocal"}
# torch.zeros_like(t) / ones_like(t) / full_like(t, c) made in forward: the number where only its
# value matters, as an element-wise operand (elementwise_bound checks that the other operand
# already has the result's shape)
FILLED_LIKE = {"zeros_like": 0.0, "ones_like": 1.0, "full_like": None}
BINARY = {"add": "add", "sub": "sub", "subtract": "sub", "mul": "mul", "multiply": "mul",
          "div": "div", "true_divide": "div", "divide": "div", "truediv": "div"}
REDUCE = {"sum": "sum", "mean": "mean", "amax": "max", "amin": "min"}
IDENTITY = {"contiguous", "clone", "detach"}
RESHAPE = {"view", "reshape", "flatten", "squeeze", "unsqueeze", "view_as", "reshape_as",
           "expand", "expand_as", "permute"}


def _arg(node, i, key, default=None):
    if len(node.args) > i:
        return node.args[i]
    return node.kwargs.get(key, default)


def convert(conv, node):
    t = node.target
    name = t if isinstance(t, str) else t.__name__
    name = name.lstrip("_") if name not in ("__getitem__",) else name
    v = fx_shape.convert(conv, node, name)  # size arithmetic, views, slices, cat, pad
    if v is not NotImplemented:
        return v
    if t is operator.getitem:
        return getitem(conv, node)
    if t is builtins.getattr:
        return attribute(conv, node)
    compared = fx_compare.kind_of(node, name)
    if compared is not None:
        return fx_compare.convert(conv, node, compared)
    if t is operator.matmul or name in ("matmul", "mm", "bmm"):
        return matmul(conv, node)
    if name in FORMS:
        return FORMS[name](conv, node)
    if t in (operator.add, operator.sub, operator.mul, operator.truediv) or name in BINARY:
        op = {operator.add: "add", operator.sub: "sub", operator.mul: "mul",
              operator.truediv: "div"}.get(t) or BINARY[name]
        return binary(conv, node, op)
    if t is operator.neg:
        return unary(conv, node, "neg")
    if t is operator.pow or name == "pow":
        return power(conv, node)
    if name in CONSTANT_TENSORS:
        c = constant_tensor([conv.value(a) for a in node.args],
                            {k: conv.value(v) for k, v in node.kwargs.items()})
        if c is not None:
            return c
    if name in FILLED_LIKE:
        return filled_like(conv, node, name)
    if name in fx_pool.FUNCTIONS or name in fx_pool.OTHER_FUNCTIONS:
        return fx_pool.pool_function(conv, node, name)  # before meta: *_with_indices
    shape, dtype = conv.meta(node, allow_tuple=name in ("max", "min"))
    args = [conv.value(a) for a in node.args]
    kw = {k: conv.value(v) for k, v in node.kwargs.items()}
    if dtype in ("i32", "i64") and name not in fx_index.FUNCTIONS and any(
            fx_compare.is_indicator(conv, v) for v in list(args) + list(kw.values())):
        raise Unsupported(f"{name} of a comparison's result giving {dtype} (PyTorch's count of "
                          "a bool tensor) is not supported; cast it first (.float())")

    def x():
        return conv.tensor(args[0] if args else kw.get("input"), "the first operand")

    def e(op, inputs=None, final=True, **attrs):
        return conv.emit(op, inputs or [x()], node, shape, dtype, final, **attrs)

    def get(i, key, default=None):
        return args[i] if len(args) > i else kw.get(key, default)

    if name == "scaled_dot_product_attention":
        return fx_attention.scaled_dot_product_attention(conv, node, args, kw)
    if name in fx_conv.FUNCTIONS:
        return fx_conv.conv_function(conv, node, name, args, kw, shape, dtype)
    if name in fx_index.FUNCTIONS:
        return fx_index.convert(conv, node, name, args, kw, shape, dtype)
    if name in DECOMPOSED:
        return DECOMPOSED[name](conv, node, args, kw, x(), shape, dtype)
    if name in ("maximum", "minimum", "fmax", "fmin"):
        return elementwise_bound(conv, node, name, get(0, "input"), get(1, "other"), shape,
                                 dtype)
    if name in UNARY:
        if name == "relu" and get(1, "inplace", False) not in (False, None) and len(args) > 1:
            pass
        return e(UNARY[name])
    if name in IDENTITY:
        return x()
    if name in ("float", "to", "type_as", "type"):
        if conv.meta(node)[1] != x().dtype:
            raise Unsupported(f"{name} (a dtype cast) is not supported")
        return x()
    if name in RESHAPE:
        src = x()
        if tuple(shape) == tuple(src.shape) and name != "permute":
            return src
        origin = next((a for a in node.args[:1]), None)
        if getattr(origin, "op", None) == "get_attr" and len(origin.users) == 1:
            attr = conv.gm
            for part in origin.target.split("."):
                attr = getattr(attr, part)
            if name != "permute" and name not in ("expand", "expand_as"):
                del conv.inputs[src.name], conv.params[src.name]
                conv.used.discard(src.name)
                return conv.param(origin.target, attr, shape)
        return fx_shape.view(conv, node, name, args, kw) if name != "permute" else \
            fx_shape.permute(conv, node, name, args, kw)
    if name in ("transpose", "swapaxes"):
        src = x()
        rank = len(src.shape)
        d = sorted(v % rank for v in (get(1, "dim0"), get(2, "dim1")))
        if rank >= 2 and d == [rank - 2, rank - 1]:
            return Transposed(src)
        return fx_shape.permute(conv, node, name, args, kw)
    if name == "t":
        src = x()
        if len(src.shape) == 2:
            return Transposed(src)
        raise Unsupported("t() of a tensor of rank != 2 is not supported")
    if name == "gelu":
        return e("gelu", approximate=get(1, "approximate", "none"))
    if name == "leaky_relu":
        return e("leaky_relu", negative_slope=float(get(1, "negative_slope", 0.01)))
    if name == "hardtanh":
        return e("hardtanh", min=float(get(1, "min_val", -1.0)), max=float(get(2, "max_val", 1.0)))
    if name == "relu6":
        return e("hardtanh", min=0.0, max=6.0)
    if name == "hardsigmoid":
        return hardsigmoid(conv, node, x(), shape, dtype)
    if name in ("elu", "selu", "celu"):
        return elu(conv, node, x(), shape, dtype, name, float(get(1, "alpha", 1.0)))
    if name in ("norm", "linalg_vector_norm"):
        return vector_norm(conv, node, name, args, kw, shape, dtype)
    if name == "normalize":
        return normalize(conv, node, x(), get(1, "p", 2.0), get(2, "dim", 1),
                         get(3, "eps", 1e-12), get(4, "out"), shape, dtype)
    if name in ("clamp", "clip"):
        lo, hi = get(1, "min"), get(2, "max")
        if any(isinstance(v, (Tensor, Transposed)) for v in (lo, hi)):
            return tensor_clamp(conv, node, x(), lo, hi, shape, dtype)
        for v in (lo, hi):
            if v is not None and not is_scalar(v):
                raise Unsupported(f"{name} with the bound {v!r} is not supported")
        if lo is None and hi is None:
            raise Unsupported(f"{name} without bounds is not supported")
        return e("clamp", min=None if lo is None else float(lo), max=None if hi is None else float(hi))
    if name == "clamp_min":
        return e("max_scalar", value=float(get(1, "min")))
    if name == "clamp_max":
        return e("min_scalar", value=float(get(1, "max")))
    if name == "softplus":
        return e("softplus", beta=float(get(1, "beta", 1.0)), threshold=float(get(2, "threshold", 20.0)))
    if name in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout"):
        return e("dropout", p=float(get(1, "p", 0.5)))
    if name == "flip":
        return flip(conv, args[0] if args else kw.get("input"), get(1, "dims"))
    if name in ("cumsum", "cumprod"):
        return scan(conv, node, name, args[0] if args else kw.get("input"), get(1, "dim"),
                    get(2, "dtype"), shape, dtype)
    if name in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"):
        return pointwise_loss(conv, node, name, args, kw, shape, dtype)
    if name == "cosine_similarity":
        return cosine_similarity(conv, node, args, kw, shape, dtype)
    if name == "triplet_margin_loss":
        return triplet_margin_loss(conv, node, args, kw, shape, dtype)
    if name == "kl_div":
        return kl_div(conv, node, args, kw, shape, dtype)
    if name in ("softmax", "log_softmax"):
        dim = get(1, "dim")
        return e(name, axis=conv.axis(dim, x()))
    if name == "logsumexp":
        return reduce_chain(conv, node, "logsumexp", x(), get(1, "dim"), get(2, "keepdim", False),
                            shape, dtype)
    if name in REDUCE or name in ("max", "min"):
        return reduction(conv, node, name, args, kw, shape, dtype)
    if name == "prod":
        return prod(conv, node, args, kw, shape, dtype)
    if name == "linear":
        ins = [x(), conv.tensor(get(1, "weight"), "the weight")]
        b = get(2, "bias")
        if b is not None:
            ins.append(conv.tensor(b, "the bias"))
        return e("linear", ins)
    if name == "layer_norm":
        ins = [x()]
        w, b = get(2, "weight"), get(3, "bias")
        if w is not None:
            ins.append(conv.tensor(w))
            if b is not None:
                ins.append(conv.tensor(b))
        elif b is not None:
            raise Unsupported("layer_norm with a bias but no weight is not supported")
        return e("layer_norm", ins, normalized_shape=list(get(1, "normalized_shape")),
                 eps=float(get(4, "eps", 1e-5)))
    if name == "rms_norm":
        ins = [x()] + ([conv.tensor(get(2, "weight"))] if get(2, "weight") is not None else [])
        eps = get(3, "eps")
        if eps is None:
            eps = torch.finfo(conv.torch_dtype(x())).eps
        return e("rms_norm", ins, normalized_shape=list(get(1, "normalized_shape")), eps=float(eps))
    if name == "group_norm":
        ins = [x()]
        w, b = get(2, "weight"), get(3, "bias")
        if (w is None) != (b is None):
            raise Unsupported("group_norm with only one of weight and bias is not supported")
        if w is not None:
            ins += [conv.tensor(w), conv.tensor(b)]
        return e("group_norm", ins, num_groups=int(get(1, "num_groups")),
                 eps=float(get(4, "eps", 1e-5)))
    raise Unsupported(f"{name} is not supported (node {node.name})")


def unary(conv, node, op):
    shape, dtype = conv.meta(node)
    return conv.emit(op, [conv.tensor(conv.value(node.args[0]))], node, shape, dtype)


def getitem(conv, node):
    src, index = conv.value(node.args[0]), node.args[1]
    if isinstance(src, MaxPair):
        if index == 0:
            return src.values
        raise Unsupported(f"the indices of {src.what} (argmax/argmin) are not supported")
    if isinstance(src, (list, tuple)):
        return src[index]
    raise Unsupported("indexing or slicing a tensor is not supported")


def attribute(conv, node):
    src, attr = conv.value(node.args[0]), node.args[1]
    if attr == "values" and isinstance(src, MaxPair):
        return src.values
    if attr in ("T", "mT") and isinstance(src, Tensor):
        if len(src.shape) == 2 or attr == "mT":
            return Transposed(src)
    raise Unsupported(f"tensor attribute .{attr} is not supported (shape-dependent code)")


def matmul(conv, node):
    shape, dtype = conv.meta(node)
    a, b = conv.value(node.args[0]), conv.value(node.args[1])
    if isinstance(a, Diagonal) or isinstance(b, Diagonal):
        return diag_matmul(conv, node, a, b, shape, dtype)
    attrs = {}
    if isinstance(a, Transposed):
        a, attrs["transpose_a"] = a.tensor, True
    if isinstance(b, Transposed):
        b, attrs["transpose_b"] = b.tensor, True
    a, b = conv.tensor(a), conv.tensor(b)
    if len(a.shape) < 2 or len(b.shape) < 2:
        raise Unsupported("matmul with a 1-d operand (matrix-vector) is not supported")
    return conv.emit("matmul", [a, b], node, shape, dtype, **attrs)


def binary(conv, node, op):
    shape, dtype = conv.meta(node)
    a, b = conv.value(node.args[0]), conv.value(node.args[1])
    alpha = node.kwargs.get("alpha", 1)
    if alpha != 1:
        if op not in ("add", "sub") or not isinstance(b, (Tensor, Transposed)):
            raise Unsupported(f"{op} with alpha is not supported")
        b = conv.emit("scale", [conv.tensor(b)], node, conv.tensor(b).shape, conv.tensor(b).dtype,
                      final=False, value=float(alpha))
    if node.kwargs.get("rounding_mode") is not None:
        raise Unsupported("div with a rounding_mode is not supported")
    if is_scalar(a) and is_scalar(b):  # numbers made in forward (ones_like(x) * 2): a number
        if op == "div" and float(b) == 0:
            raise Unsupported("division by the constant 0 is not supported")
        a, b = float(a), float(b)
        return ConstantTensor({"add": a + b, "sub": a - b, "mul": a * b,
                               "div": a / b if op == "div" else 0.0}[op])
    if is_scalar(b):
        x, c = conv.tensor(a), float(b)
        if op == "add":
            return conv.emit("add_scalar", [x], node, shape, dtype, value=c)
        if op == "sub":
            return conv.emit("add_scalar", [x], node, shape, dtype, value=-c)
        if op == "mul":
            return conv.emit("scale", [x], node, shape, dtype, value=c)
        if c == 0:
            raise Unsupported("division by the constant 0 is not supported")
        return conv.emit("scale", [x], node, shape, dtype, value=1.0 / c)
    if is_scalar(a):
        x, c = conv.tensor(b), float(a)
        if op == "add":
            return conv.emit("add_scalar", [x], node, shape, dtype, value=c)
        if op == "mul":
            return conv.emit("scale", [x], node, shape, dtype, value=c)
        if op == "sub":
            n = conv.emit("neg", [x], node, x.shape, x.dtype, final=False)
            return conv.emit("add_scalar", [n], node, shape, dtype, value=c)
        # c / x = reciprocal(x) * c
        r = conv.emit("reciprocal", [x], node, shape, dtype, final=c == 1.0)
        return r if c == 1.0 else conv.emit("scale", [r], node, shape, dtype, value=c)
    a, b = conv.tensor(a), conv.tensor(b)
    ints = [t.dtype in ("i32", "i64") for t in (a, b)]
    if ints[0] != ints[1] and "bool" not in (a.dtype, b.dtype):
        # PyTorch promotes; the spec has no cast (docs/problem-spec.md)
        i, f = (a, b) if ints[0] else (b, a)
        raise Unsupported(f"{op} of the integer tensor {i.name} ({i.dtype}) and the float tensor "
                          f"{f.name} ({f.dtype}) is not supported: the spec has no cast from "
                          "integers to floats")
    return conv.emit(op, [a, b], node, shape, dtype)


def filled_like(conv, node, name):
    """torch.zeros_like / ones_like / full_like(x, c) -> the number (a ConstantTensor), for the
    operand of an element-wise op; the tensor itself (a graph output, a matmul operand) has no
    spec op and is refused there by conv.tensor."""
    args = [conv.value(a) for a in node.args]
    kw = {k: conv.value(v) for k, v in node.kwargs.items()}
    c = FILLED_LIKE[name]
    if name == "full_like":
        c = args[1] if len(args) > 1 else kw.get("fill_value")
    if c is None or isinstance(c, bool) or not is_scalar(c):
        raise Unsupported(f"{name} with fill value {c!r} is not supported")
    dt = kw.get("dtype")
    if dt is not None and not getattr(dt, "is_floating_point", False):
        raise Unsupported(f"{name} with dtype {dt} is not supported")
    return ConstantTensor(float(c))


def power(conv, node):
    shape, dtype = conv.meta(node)
    x, p = conv.value(node.args[0]), conv.value(node.args[1])
    if not is_scalar(p):
        raise Unsupported("pow with a tensor exponent is not supported")
    x = conv.tensor(x)
    if p == 1:
        return x
    if p == 0.5:
        return conv.emit("sqrt", [x], node, shape, dtype)
    if p == -0.5:
        return conv.emit("rsqrt", [x], node, shape, dtype)
    if float(p).is_integer() and 2 <= p <= 16:
        # square-and-multiply, most significant bit first: x^6 = (x^2 * x)^2, x^8 = ((x^2)^2)^2;
        # at most 7 roundings of a few ulp each, inside every policy's tolerance
        bits = bin(int(p))[3:]  # the bits after the leading one
        acc = x
        for i, bit in enumerate(bits):
            last = i == len(bits) - 1
            acc = conv.emit("square", [acc], node, shape, dtype, last and bit == "0")
            if bit == "1":
                acc = conv.emit("mul", [acc, x], node, shape, dtype, last)
        return acc
    raise Unsupported(f"pow with exponent {p} is not supported (integers 2..16, 0.5 and -0.5 "
                      "are)")


def vector_norm(conv, node, name, args, kw, shape, dtype):
    """torch.norm / Tensor.norm / torch.linalg.vector_norm with p (ord) 2 ('fro') or 1 over some
    dims (all by default): sqrt(sum(x^2)) or sum(|x|), as ops the spec has."""
    x = conv.tensor(args[0] if args else kw.get("input"))
    key = "ord" if name == "linalg_vector_norm" else "p"
    p = args[1] if len(args) > 1 else kw.get(key, 2 if name == "linalg_vector_norm" else "fro")
    dim = args[2] if len(args) > 2 else kw.get("dim")
    keepdim = args[3] if len(args) > 3 else kw.get("keepdim", False)
    if kw.get("dtype") is not None:
        raise Unsupported(f"{name} with a dtype is not supported")
    if p in (2, 2.0, "fro"):
        sq = conv.emit("square", [x], node, x.shape, dtype, False)
        total = reduce_chain(conv, node, "sum", sq, dim, keepdim, shape, dtype, final=False)
        return conv.emit("sqrt", [total], node, shape, dtype)
    if p in (1, 1.0):
        a = conv.emit("abs", [x], node, x.shape, dtype, False)
        return reduce_chain(conv, node, "sum", a, dim, keepdim, shape, dtype)
    raise Unsupported(f"{name} with p = {p!r} is not supported (2, 'fro' and 1 are)")


def normalize(conv, node, x, p, dim, eps, out, shape, dtype):
    """F.normalize(x, p, dim, eps) = x / clamp_min(norm_p(x over dim), eps) with p 1 or 2: one
    l1_normalize / l2_normalize op over the last dim; over another dim (which kforge lowers over
    the last dim only) the same as separate ops (abs or square, sum, sqrt, max_scalar, div)."""
    if out is not None:
        raise Unsupported("normalize with out= is not supported")
    if p not in (1, 1.0, 2, 2.0):
        raise Unsupported(f"normalize with p = {p!r} is not supported (1 and 2 are)")
    if not is_scalar(eps) or eps < 0:
        raise Unsupported(f"normalize with eps = {eps!r} is not supported")
    rank = len(x.shape)
    dim = conv.axis(dim, x) % rank
    l2 = p in (2, 2.0)
    if dim == rank - 1:
        return conv.emit("l2_normalize" if l2 else "l1_normalize", [x], node, shape, dtype,
                         axis=-1, eps=float(eps) if eps else None)
    keep = tuple(1 if i == dim else s for i, s in enumerate(x.shape))
    t = conv.emit("square" if l2 else "abs", [x], node, x.shape, dtype, False)
    t = conv.emit("sum", [t], node, keep, dtype, False, axis=dim, keepdim=True)
    if l2:
        t = conv.emit("sqrt", [t], node, keep, dtype, False)
    if eps:
        t = conv.emit("max_scalar", [t], node, keep, dtype, False, value=float(eps))
    return conv.emit("div", [x, t], node, shape, dtype)


def _flip_dims(conv, dims, t):
    dims = (dims,) if isinstance(dims, int) else tuple(dims or ())
    rank = len(t.shape)
    return tuple(sorted(conv.axis(d, t) % rank for d in dims))


def flip(conv, x, dims):
    """x.flip(dims): no op of its own. A flip of a flipped value over the same dims is the value
    itself; otherwise the result is a Flipped view that only a cumsum / cumprod over that one dim
    may read (a reverse scan, whose result is flipped back by the next flip)."""
    if isinstance(x, Flipped):
        if _flip_dims(conv, dims, x.tensor) == x.dims:
            return x.tensor
        raise Unsupported("flip of a flipped tensor over other dims is not supported")
    x = conv.tensor(x, "the flip input")
    d = _flip_dims(conv, dims, x)
    if len(d) != 1:
        raise Unsupported(f"flip over dims {list(d)} is not supported (one dim, around a cumsum)")
    return Flipped(x, d)


def scan(conv, node, name, x, dim, out_dtype, shape, dtype):
    """torch.cumsum / cumprod(x, dim) -> one cumsum / cumprod op over `dim`; over a Flipped input
    (x.flip(dim)) the reverse scan, itself Flipped so that the closing flip gives its result."""
    if dim is None:
        raise Unsupported(f"{name} without dim is not supported")
    if out_dtype is not None:
        raise Unsupported(f"{name} with dtype= is not supported")
    if isinstance(x, Flipped):
        rank = len(x.tensor.shape)
        if x.dims != (conv.axis(dim, x.tensor) % rank,):
            raise Unsupported(f"{name} over a tensor flipped along another dim is not supported")
        out = conv.emit(name, [x.tensor], node, shape, dtype, axis=x.dims[0] - rank, reverse=True)
        return Flipped(out, x.dims)
    x = conv.tensor(x, f"the {name} input")
    rank = len(x.shape)
    return conv.emit(name, [x], node, shape, dtype, axis=conv.axis(dim, x) % rank - rank)


def tensor_clamp(conv, node, x, lo, hi, shape, dtype):
    """torch.clamp(x, lo, hi) with a tensor bound: min(max(x, lo), hi), each bound a maximum /
    minimum (broadcast) or, where it is a number, max_scalar / min_scalar."""
    for bound, op, scalar_op in ((lo, "maximum", "max_scalar"), (hi, "minimum", "min_scalar")):
        if bound is None:
            continue
        last = bound is hi or hi is None
        if is_scalar(bound):
            x = conv.emit(scalar_op, [x], node, x.shape, dtype, last, value=float(bound))
        else:
            b = conv.tensor(bound, "a clamp bound")
            n = max(len(x.shape), len(b.shape))
            out = tuple(max(p, q) for p, q in zip((1,) * (n - len(x.shape)) + tuple(x.shape),
                                                  (1,) * (n - len(b.shape)) + tuple(b.shape)))
            x = conv.emit(op, [x, b], node, out, dtype, last)
    return x


def reduction(conv, node, name, args, kw, shape, dtype):
    first = args[0] if args else kw.get("input")
    dim = args[1] if len(args) > 1 else kw.get("dim", kw.get("other"))
    if name in ("max", "min") and (ConstantTensor in (type(first), type(dim)) or
                                   isinstance(dim, (Tensor, Transposed, Flipped))):
        # torch.max(x, torch.tensor(c)), either order, or torch.max(a, b) of two tensors:
        # the element-wise maximum
        return elementwise_bound(conv, node, name, first, dim, shape, dtype)
    x = conv.tensor(first)
    keepdim = args[2] if len(args) > 2 else kw.get("keepdim", False)
    if kw.get("dtype") is not None:
        raise Unsupported(f"{name} with a dtype is not supported")
    if name in ("max", "min"):
        if dim is None:  # full reduction, one value
            return reduce_chain(conv, node, name, x, None, False, shape, dtype)
        if not isinstance(dim, int):
            raise Unsupported(f"{name} over {dim!r} is not supported")
        rank = len(x.shape)
        out_shape = list(x.shape)
        out_shape = tuple(out_shape[:dim % rank] + ([1] if keepdim else []) +
                          out_shape[dim % rank + 1:])
        values = conv.emit(name, [x], node, out_shape, x.dtype, axis=dim, keepdim=bool(keepdim))
        return MaxPair(values, f"torch.{name}")
    return reduce_chain(conv, node, REDUCE[name], x, dim, keepdim, shape, dtype)


def prod(conv, node, args, kw, shape, dtype):
    """torch.prod(x, dim, keepdim) / x.prod(dim, keepdim) -> one prod op over `dim`. PyTorch's
    prod takes one int dim; without it (the product of every element) it is refused: one value
    from all the factors under- or overflows f32 for any but tiny inputs."""
    x = conv.tensor(args[0] if args else kw.get("input"), "the first operand")
    dim = args[1] if len(args) > 1 else kw.get("dim")
    keepdim = args[2] if len(args) > 2 else kw.get("keepdim", False)
    if kw.get("dtype") is not None:
        raise Unsupported("prod with a dtype is not supported")
    if dim is None:
        raise Unsupported("prod without dim (the product of every element) is not supported; "
                          "give dim, e.g. torch.prod(x, dim=1)")
    if not isinstance(dim, int):
        raise Unsupported(f"prod over {dim!r} is not supported (one int dim)")
    return reduce_chain(conv, node, "prod", x, dim, keepdim, shape, dtype)
