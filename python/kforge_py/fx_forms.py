"""Matrix-product forms the spec writes with its own ops (used by fx_ops.convert and
fx_ops.matmul): torch.einsum of two operands that is one matmul (batch dims broadcast, either
operand transposed, the result possibly transposed by swapping the operands) or an element-wise
mul; einsum of one operand that sums axes or swaps the last two; torch.diag(v) of a vector read
only as a matmul operand (diag(v) @ B = v[:, None] * B, B @ diag(v) = B * v). Each form is exact
in real arithmetic; what needs a permute, a reshape or a diagonal is refused with the equation."""
import operator
import string
from dataclasses import dataclass

from kforge_py.fx_chains import reduce_chain
from kforge_py.fx_types import Tensor, Transposed, Unsupported

# name -> fn(conv, node) -> the node's value (the fx node unconverted: its arguments are not all
# tensors, e.g. the einsum equation)
FORMS = {}


def _forms(*names):
    def register(fn):
        for n in names:
            FORMS[n] = fn
        return fn
    return register


# ---- einsum ----

def _parse(eq, ranks):
    """(operand subscripts, output subscripts), '...' spelled out as letters the equation does
    not use (an operand with fewer broadcast dims takes the last ones), the implicit output
    (no '->') as the letters that occur once, in order, after the broadcast dims."""
    eq = eq.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise Unsupported(f"einsum '{eq}' names {len(terms)} operand(s) for {len(ranks)}")
    spare = [c for c in string.ascii_letters if c not in eq]
    extra = [r - (len(t) - 3) if "..." in t else 0 for t, r in zip(terms, ranks)]
    if min(extra) < 0:
        raise Unsupported(f"einsum '{eq}': an operand has fewer dims than its subscripts")
    ell = "".join(spare[:max(extra)])
    terms = [t.replace("...", ell[len(ell) - e:]) for t, e in zip(terms, extra)]
    if arrow:
        out = rhs.replace("...", ell)
    else:
        letters = "".join(terms).replace(".", "")
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1
                                   and c not in ell))
    for t, r in zip(terms, ranks):
        if len(t) != r or not t.isalpha():
            raise Unsupported(f"einsum '{eq}': subscripts '{t}' for an operand of rank {r}")
    for t in terms + [out]:
        if len(set(t)) != len(t):
            raise Unsupported(f"einsum '{eq}' repeats an index in '{t}' (a diagonal or trace), "
                              "which is not supported")
    return terms, out


def _sum_alone(conv, node, x, term, keep, dtype):
    """x with the axes whose letters are not in `keep` summed away: (tensor, its subscripts)."""
    dims = [i for i, c in enumerate(term) if c not in keep]
    if not dims:
        return x, term
    shape = tuple(s for i, s in enumerate(x.shape) if i not in dims)
    x = reduce_chain(conv, node, "sum", x, dims, False, shape, dtype, final=False)
    return x, "".join(c for c in term if c in keep)


@_forms("einsum")
def einsum(conv, node):
    args = [conv.value(a) for a in node.args]
    eq, operands = (args[0] if args else node.kwargs.get("equation")), args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = list(operands[0])
    if not isinstance(eq, str):
        raise Unsupported("einsum in the sublist format (operand, [dims], ...) is not supported")
    if len(operands) not in (1, 2):
        raise Unsupported(f"einsum '{eq}' of {len(operands)} operands is not supported "
                          "(one or two)")
    shape, dtype = conv.meta(node)
    xs = [conv.tensor(o, f"an einsum '{eq}' operand") for o in operands]
    terms, out = _parse(eq, [len(x.shape) for x in xs])
    if len(xs) == 1:
        (x,), (s,) = xs, terms
        if out == s:
            return x
        if len(out) == len(s) and len(s) >= 2 and out == s[:-2] + s[-1] + s[-2]:
            return Transposed(x)
        if out == "".join(c for c in s if c in out):
            return reduce_chain(conv, node, "sum", x, [i for i, c in enumerate(s) if c not in out],
                                False, shape, dtype)
        raise Unsupported(f"einsum '{eq}' permutes axes other than the last two, which is not "
                          "supported")
    (a, b), (sa, sb) = xs, terms
    # an index of one operand only that the result drops: summed over that operand first
    a, sa = _sum_alone(conv, node, a, sa, set(sb) | set(out), dtype)
    b, sb = _sum_alone(conv, node, b, sb, set(sa) | set(out), dtype)
    contracted = [c for c in sa if c in sb and c not in out]
    if not contracted:
        # no contraction: an element-wise mul where each operand broadcasts (its subscripts are
        # the result's last ones)
        if all(out.endswith(t) for t in (sa, sb)):
            return conv.emit("mul", [a, b], node, shape, dtype)
        raise Unsupported(f"einsum '{eq}' (a product without a contraction whose operands do not "
                          "broadcast to the result in place; an outer product needs a reshape) "
                          "is not supported")
    if len(contracted) > 1:
        raise Unsupported(f"einsum '{eq}' contracts {len(contracted)} indices "
                          f"({''.join(contracted)}); the spec's matmul contracts one")
    k = contracted[0]
    if len(sa) < 2 or len(sb) < 2:
        raise Unsupported(f"einsum '{eq}' has an operand of rank 1 after its sums "
                          "(a matrix-vector product), which is not supported")
    if k not in sa[-2:] or k not in sb[-2:]:
        raise Unsupported(f"einsum '{eq}' contracts index {k}, which is not among the last two "
                          "axes of each operand (a permute), which is not supported")
    ta, tb = sa[-2] == k, sb[-1] == k
    m, n = sa[-1] if ta else sa[-2], sb[-2] if tb else sb[-1]
    batch_a, batch_b = sa[:-2], sb[:-2]
    short = min(len(batch_a), len(batch_b))
    aligned = all(batch_a[len(batch_a) - i] == batch_b[len(batch_b) - i]
                  for i in range(1, short + 1))
    if m in sb or n in sa or not aligned:
        raise Unsupported(f"einsum '{eq}' is not a matmul whose batch dims broadcast in place "
                          "(it needs a permute or a reshape), which is not supported")
    batch = batch_a if len(batch_a) >= len(batch_b) else batch_b
    if out == batch + m + n:
        return conv.emit("matmul", [a, b], node, shape, dtype, transpose_a=ta or None,
                         transpose_b=tb or None)
    if out == batch + n + m:  # (A B)^T = B^T A^T
        return conv.emit("matmul", [b, a], node, shape, dtype, transpose_a=(not tb) or None,
                         transpose_b=(not ta) or None)
    raise Unsupported(f"einsum '{eq}' orders its result as '{out}', not '{batch + m + n}' "
                      "(a permute), which is not supported")


# ---- diag(v) as a matmul operand ----

@dataclass
class Diagonal:  # diag(v) of a vector; only a matmul operand may read it (diag_matmul)
    tensor: Tensor
    source: object  # the fx node of v
    node: object    # the fx node of diag


def _matmul_user(user):
    t = user.target
    name = t if isinstance(t, str) else getattr(t, "__name__", "")
    return (user.op in ("call_function", "call_method")
            and (t is operator.matmul or name.lstrip("_") in ("matmul", "mm")))


@_forms("diag")
def diag(conv, node):
    args = [conv.value(a) for a in node.args]
    kw = {k: conv.value(v) for k, v in node.kwargs.items()}
    v = conv.tensor(args[0] if args else kw.get("input"), "the diag input")
    offset = args[1] if len(args) > 1 else kw.get("diagonal", kw.get("offset", 0))
    if len(v.shape) != 1:
        raise Unsupported(f"diag of a tensor of shape {list(v.shape)} is not supported "
                          "(only diag of a vector, as a matmul operand)")
    if offset != 0:
        raise Unsupported(f"diag with diagonal offset {offset} is not supported")
    for user in node.users:
        if not _matmul_user(user) or list(user.args[:2]).count(node) != 1:
            raise Unsupported(f"diag(v) (node {node.name}) is supported only as one operand of "
                              f"a matmul (diag(v) @ B, B @ diag(v)); {user.name} reads it "
                              "otherwise")
    return Diagonal(v, node.args[0] if node.args else node.kwargs.get("input"), node)


def _column(conv, d):
    """v [N] of diag(v) as [N, 1]: the same memory, so an input or parameter that only diag
    reads is declared so (a computed vector would need a reshape)."""
    v, src = d.tensor, d.source
    col = (v.shape[0], 1)
    if getattr(src, "op", None) not in ("placeholder", "get_attr") or len(src.users) != 1 \
            or len(d.node.users) != 1:
        raise Unsupported(f"diag(v) @ B (node {d.node.name}) needs v as a column: supported "
                          "when v is an input or parameter that only this diag reads")
    if src.op == "placeholder":
        conv.inputs[v.name] = Tensor(v.name, col, v.dtype)
        return conv.inputs[v.name]
    path, _ = conv.params.pop(v.name)
    del conv.inputs[v.name]
    conv.used.discard(v.name)
    attr = conv.gm
    for part in path.split("."):
        attr = getattr(attr, part)
    return conv.param(path, attr, col)


def diag_matmul(conv, node, a, b, shape, dtype):
    """diag(v) @ B = v[:, None] * B (B a vector: v * B); B @ diag(v) = B * v."""
    if isinstance(a, Diagonal) and isinstance(b, Diagonal):
        raise Unsupported("diag(u) @ diag(v) is not supported")
    if isinstance(b, Diagonal):
        return conv.emit("mul", [conv.tensor(a, "the matmul operand"), b.tensor], node, shape,
                         dtype)
    b = conv.tensor(b, "the matmul operand")
    v = a.tensor if len(b.shape) == 1 else _column(conv, a)
    return conv.emit("mul", [v, b], node, shape, dtype)
