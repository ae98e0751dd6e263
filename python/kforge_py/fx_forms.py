"""Matrix-product forms the spec writes with its own ops (used by fx_ops.convert and
fx_ops.matmul): torch.einsum of any number of operands (fx_einsum: pairwise matmuls and
element-wise muls with the permutes and reshapes they need); torch.diag(v) of a vector read
only as a matmul operand (diag(v) @ B = v[:, None] * B, B @ diag(v) = B * v). Each form is exact
in real arithmetic."""
import operator
from dataclasses import dataclass

from kforge_py import fx_einsum
from kforge_py.fx_types import Tensor, Unsupported

# name -> fn(conv, node) -> the node's value (the fx node unconverted: its arguments are not all
# tensors, e.g. the einsum equation)
FORMS = {}


def _forms(*names):
    def register(fn):
        for n in names:
            FORMS[n] = fn
        return fn
    return register


# ---- einsum (fx_einsum) ----

FORMS["einsum"] = fx_einsum.einsum


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
