"""Shape code in forward -> the spec's shape ops (docs/problem-spec.md: reshape, expand, permute,
slice, cat, pad), for fx_ops.convert.

`.size()` / `.shape` and the integer arithmetic on them are evaluated at trace time (the sizes
fx ShapeProp gives); view / reshape / flatten / squeeze / unsqueeze become `reshape`, expand /
expand_as `expand`, permute / transpose (other than a matmul operand) / movedim `permute`,
narrow / select / indexing with slices and integers `slice` (+ a `reshape` that drops the indexed
dims or adds the None ones), cat `cat` (constant pieces from zeros_like / ones_like / full_like at
its ends become a `pad`), stack a reshape per piece and a `cat`, split / chunk a list of slices,
F.pad `pad`, torch.roll two slices and a `cat` per rolled dim, indexing by a constant integer
index (a buffer) a one-hot `matmul` (fx_gather.one_hot_of). The ops carry concrete sizes here;
spec_build names them (name_shape_attrs): an entry that is one axis of the input takes that
axis's dim name, a merged group a product "C*H*W", so the spec follows the dims when they are
re-bound. A shape the spec cannot express (advanced indexing with a tensor that depends on the
inputs, a non-constant pad mode) raises Unsupported naming it."""
import builtins
import math
import operator

import torch

from kforge_py import fx_gather
from kforge_py.fx_types import ConstantTensor, Tensor, Transposed, Unsupported

SHAPE_OPS = ("reshape", "expand", "permute", "slice", "cat", "pad")
VIEWS = {"view", "reshape", "flatten", "squeeze", "unsqueeze", "view_as", "reshape_as", "unflatten"}
INT_ARITH = {operator.add: operator.add, operator.sub: operator.sub, operator.mul: operator.mul,
             operator.floordiv: operator.floordiv, operator.mod: operator.mod,
             operator.neg: operator.neg}


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _arg(args, kw, i, key, default=None):
    return args[i] if len(args) > i else kw.get(key, default)


def convert(conv, node, name):
    """The value of `node` where it is shape code, else NotImplemented."""
    t = node.target
    if t in INT_ARITH:
        vals = [conv.value(a) for a in node.args]
        if vals and all(_is_int(v) for v in vals):
            return INT_ARITH[t](*vals)
        return NotImplemented
    if t is builtins.getattr and node.args[1] in ("shape", "ndim"):
        src = conv.value(node.args[0])
        src = src.tensor if isinstance(src, Transposed) else src
        if isinstance(src, Tensor):
            return tuple(_shape_of(conv, node.args[0])) if node.args[1] == "shape" \
                else len(src.shape)
        return NotImplemented
    if name in ("size", "dim", "numel") and node.op == "call_method":
        shape = _shape_of(conv, node.args[0])
        if name == "dim":
            return len(shape)
        if name == "numel":
            return math.prod(shape)
        d = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
        d = conv.value(d) if d is not None else None
        return tuple(shape) if d is None else shape[d]
    if t is operator.getitem and isinstance(conv.value(node.args[0]), (Tensor, Transposed)):
        return index(conv, node)
    args = [conv.value(a) for a in node.args]
    kw = {k: conv.value(v) for k, v in node.kwargs.items()}
    if name in VIEWS or name in ("expand", "expand_as", "broadcast_to"):
        return view(conv, node, name, args, kw)
    if name in ("permute", "movedim", "moveaxis") or (
            name in ("transpose", "swapaxes") and not _last_two(conv, node, args, kw)):
        return permute(conv, node, name, args, kw)
    if name == "narrow":
        x = conv.tensor(args[0])
        dim, start, length = (_arg(args, kw, 1, "dim"), _arg(args, kw, 2, "start"),
                              _arg(args, kw, 3, "length"))
        return slice_op(conv, node, x, dim, start, start + length, 1, final=True)
    if name == "unfold" and node.op == "call_method":
        return unfold(conv, node, conv.tensor(args[0]), _arg(args, kw, 1, "dimension"),
                      _arg(args, kw, 2, "size"), _arg(args, kw, 3, "step"))
    if name == "select":
        x = conv.tensor(args[0])
        dim, i = _arg(args, kw, 1, "dim"), _arg(args, kw, 2, "index")
        s = slice_op(conv, node, x, dim, i, None if i == -1 else i + 1, 1, final=False)
        return reshape_to(conv, node, s, _meta(conv, node), final=True)
    if name in ("cat", "concat", "concatenate"):
        return cat(conv, node, node.args[0] if node.args else node.kwargs["tensors"],
                   _arg(args, kw, 1, "dim", 0))
    if name == "stack":
        return stack(conv, node, node.args[0] if node.args else node.kwargs["tensors"],
                     _arg(args, kw, 1, "dim", 0))
    if name in ("split", "chunk", "tensor_split", "unbind"):
        return split(conv, node, name, args, kw)
    if name == "pad":
        return pad(conv, node, args, kw)
    if name == "roll":
        return roll(conv, node, args, kw)
    return NotImplemented


def _meta(conv, node):
    return conv.meta(node)[0]


def _shape_of(conv, arg):
    v = conv.value(arg)
    if isinstance(v, Transposed):
        s = list(v.tensor.shape)
        s[-2], s[-1] = s[-1], s[-2]
        return s
    if isinstance(v, Tensor):
        return list(v.shape)
    raise Unsupported(f"size of {type(v).__name__} {v!r}: not a tensor")


def _last_two(conv, node, args, kw):
    x = args[0] if args else None
    if not isinstance(x, Tensor):
        return False
    rank = len(x.shape)
    d = sorted(v % rank for v in (_arg(args, kw, 1, "dim0"), _arg(args, kw, 2, "dim1")))
    return rank >= 2 and d == [rank - 2, rank - 1]


def _emit_shaped(conv, op, x, node, shape, final=True):
    """conv.emit of a reshape / expand, whose "shape" attribute would clash with emit's own
    argument: the target shape (concrete here; spec_build names it)."""
    out = conv.emit(op, [x], node, shape, x.dtype, final)
    conv.ops[-1]["shape"] = list(shape)
    conv.ops[-1]["output"] = conv.ops[-1].pop("output")  # keep "output" last
    return out


def reshape_to(conv, node, x, shape, final=True):
    shape = tuple(shape)
    if tuple(x.shape) == shape:
        return x
    return _emit_shaped(conv, "reshape", x, node, shape, final)


def view(conv, node, name, args, kw):
    x = conv.tensor(args[0] if args else kw.get("input"), "the reshaped tensor")
    shape, dtype = conv.meta(node)
    if tuple(shape) == tuple(x.shape):
        return x
    if name in ("expand", "expand_as", "broadcast_to"):
        return _emit_shaped(conv, "expand", x, node, shape)
    if math.prod(shape) != math.prod(x.shape):
        raise Unsupported(f"{name} of {list(x.shape)} to {list(shape)}: the element counts differ")
    return reshape_to(conv, node, x, shape)


def permute(conv, node, name, args, kw):
    x = conv.tensor(args[0] if args else kw.get("input"), "the permuted tensor")
    rank = len(x.shape)
    if name == "permute":
        dims = args[1:] if len(args) > 1 else kw.get("dims")
        if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
            dims = dims[0]
        perm = [d % rank for d in dims]
    elif name in ("transpose", "swapaxes"):
        a, b = _arg(args, kw, 1, "dim0") % rank, _arg(args, kw, 2, "dim1") % rank
        perm = list(range(rank))
        perm[a], perm[b] = perm[b], perm[a]
    else:  # movedim(source, destination) with one dim each
        src, dst = _arg(args, kw, 1, "source"), _arg(args, kw, 2, "destination")
        if not (_is_int(src) and _is_int(dst)):
            raise Unsupported(f"{name} of several dims is not supported")
        perm = list(range(rank))
        perm.insert(dst % rank, perm.pop(src % rank))
    if perm == list(range(rank)):
        return x
    shape, dtype = conv.meta(node)
    return conv.emit("permute", [x], node, shape, dtype, dims=perm)


def materialize_transposed(conv, v):
    """A Transposed value (x.T, x.transpose(-2, -1)) read by something other than a matmul: a
    permute of its last two dims."""
    x = v.tensor
    rank = len(x.shape)
    perm = list(range(rank))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    shape = list(x.shape)
    shape[-2], shape[-1] = shape[-1], shape[-2]
    name = conv.fresh(f"{x.name}_t")
    conv.ops.append({"op": "permute", "inputs": [x.name], "dims": perm, "output": name})
    conv.shapes[name] = tuple(shape)
    return Tensor(name, tuple(shape), x.dtype)


def slice_op(conv, node, x, dim, start, stop, step, final=True):
    """x[start:stop:step] on `dim`, Python's rules (clamped; negative counts from the end), as a
    slice op whose end is written from the end of the axis where it is in its upper half (so the
    spec follows a re-bound size); the whole axis is x itself."""
    rank = len(x.shape)
    if not -rank <= dim < rank:
        raise Unsupported(f"dim {dim} is out of range for a tensor of rank {rank}")
    dim %= rank
    n = x.shape[dim]
    step = 1 if step is None else step
    if step < 1:
        raise Unsupported(f"a slice step of {step} is not supported (steps are >= 1)")
    lo, hi, _ = slice(start, stop, step).indices(n)
    if hi <= lo:
        raise Unsupported(f"the slice [{start}:{stop}:{step}] of dim {dim} (size {n}) is empty")
    if (lo, hi, step) == (0, n, 1):
        return x
    attrs = {"axis": dim}
    if lo:
        attrs["start"] = lo if lo <= n // 2 else lo - n
    if hi != n:
        attrs["end"] = hi if hi <= n // 2 else hi - n
    if step != 1:
        attrs["step"] = step
    count = (hi - lo + step - 1) // step
    shape = list(x.shape)
    shape[dim] = count
    return conv.emit("slice", [x], node, shape, x.dtype, final, **attrs)


def roll(conv, node, args, kw):
    """torch.roll(x, shifts, dims): per rolled dim, the last `shift` elements cat before the
    others (two slices written from the end of the axis, so they follow a re-bound size)."""
    x = conv.tensor(args[0] if args else kw.get("input"), "the rolled tensor")
    shifts, dims = _arg(args, kw, 1, "shifts"), _arg(args, kw, 2, "dims")
    if dims is None:
        raise Unsupported("roll without dims (over the flattened tensor) is not supported")
    shifts = list(shifts) if isinstance(shifts, (list, tuple)) else [shifts]
    dims = list(dims) if isinstance(dims, (list, tuple)) else [dims]
    rank = len(x.shape)
    if len(shifts) != len(dims) or not all(_is_int(v) for v in shifts + dims) or \
            not all(-rank <= d < rank for d in dims):
        raise Unsupported(f"roll with shifts {shifts} and dims {dims} is not supported (one "
                          "integer shift per dim of the tensor)")
    todo = [(s % x.shape[d % rank], d % rank) for s, d in zip(shifts, dims)
            if s % x.shape[d % rank]]
    cur = x
    for i, (k, d) in enumerate(todo):
        n = cur.shape[d]
        tail = slice_op(conv, node, cur, d, n - k, n, 1, final=False)
        head = slice_op(conv, node, cur, d, 0, n - k, 1, final=False)
        cur = conv.emit("cat", [tail, head], node, cur.shape, cur.dtype,
                        final=i == len(todo) - 1, axis=d)
    return cur


def unfold(conv, node, x, dim, size, step):
    """x.unfold(dim, size, step) with step == size (non-overlapping patches, ViT's patching): a
    slice to whole patches, a reshape of the axis into (patches, size) and a permute of `size`
    to the end. Overlapping windows (step < size) copy elements: not supported."""
    if step != size:
        raise Unsupported(f"unfold with step {step} != size {size} (overlapping or gapped "
                          "windows) is not supported; non-overlapping patches are")
    rank = len(x.shape)
    dim %= rank
    count = x.shape[dim] // size
    if count < 1:
        raise Unsupported(f"unfold of size {size} over an axis of {x.shape[dim]} is empty")
    x = slice_op(conv, node, x, dim, 0, count * size, 1, final=False)
    split = tuple(x.shape[:dim]) + (count, size) + tuple(x.shape[dim + 1:])
    x = reshape_to(conv, node, x, split, final=False)
    perm = list(range(dim + 1)) + list(range(dim + 2, rank + 1)) + [dim + 1]
    shape, dtype = conv.meta(node)
    if perm == list(range(rank + 1)):
        return x
    return conv.emit("permute", [x], node, shape, dtype, dims=perm)


def index(conv, node):
    """x[...] with integers, slices, None and Ellipsis: a slice per sliced dim, then a reshape
    that drops the integer-indexed dims and adds the None ones."""
    x = conv.tensor(conv.value(node.args[0]), "the indexed tensor")
    idx = node.args[1]
    idx = idx if isinstance(idx, tuple) else (idx,)
    idx = tuple(conv.value(i) if isinstance(i, torch.fx.Node) else i for i in idx)
    if len(idx) == 1 and isinstance(idx[0], Tensor):  # a constant index: a one-hot matmul
        hot = fx_gather.one_hot_of(conv, node, x, idx[0])
        if hot is not None:  # [N, T] @ x viewed [T, rest], viewed back [N, ...]
            n, rest = hot.shape[0], tuple(x.shape[1:])
            flat = reshape_to(conv, node, x, (x.shape[0], math.prod(rest)), final=False)
            out = conv.emit("matmul", [hot, flat], node, (n, math.prod(rest)), x.dtype, final=False)
            return reshape_to(conv, node, out, (n,) + rest)
    for i in idx:
        if not (i is None or i is Ellipsis or _is_int(i) or isinstance(i, slice)):
            kind = ("list" if isinstance(i, (list, tuple))  # fx's immutable_list is a list
                    else "tensor" if isinstance(i, torch.Tensor) else type(i).__name__)
            raise Unsupported(f"indexing with {kind} (advanced indexing) is not "
                              "supported; integers, slices, None and ... are")
    real = [i for i in idx if i is not None and i is not Ellipsis]
    if Ellipsis in idx:
        k = idx.index(Ellipsis)
        fill = (slice(None),) * (len(x.shape) - len(real))
        idx = idx[:k] + fill + idx[k + 1:]
    dim, cur = 0, x
    for i in idx:
        if i is None:
            continue
        if _is_int(i):
            n = x.shape[dim]
            if not -n <= i < n:
                raise Unsupported(f"index {i} is out of range for dim {dim} of size {n}")
            i %= n
            cur = slice_op(conv, node, cur, dim, i, i + 1, 1, final=False)
        elif isinstance(i, slice):
            for v in (i.start, i.stop, i.step):
                if v is not None and not _is_int(v):
                    raise Unsupported("a slice bound that is not an integer is not supported")
            cur = slice_op(conv, node, cur, dim, i.start, i.stop, i.step, final=False)
        dim += 1
    return reshape_to(conv, node, cur, _meta(conv, node))


def _const_shape(conv, n):
    tm = n.meta.get("tensor_meta") if isinstance(n, torch.fx.Node) else None
    return tuple(tm.shape) if tm is not None and hasattr(tm, "shape") else None


FILLED_LIKE_NAMES = ("zeros_like", "ones_like", "full_like")
# keys an op carries from here to spec_build's naming, which consumes them (never in a spec):
# "pads_like" (axis, [before, after]): per constant cat piece padded on that side, the (tensor,
# axis) whose extent the piece copies (a zeros_like(v)), None where not known; "tie_axes": the
# (tensor, axis) pairs union_axes joins (the equal pieces of a cat with such a piece)
NAMING_HINTS = ("pads_like", "tie_axes")


def _like_source(conv, piece, dim, extent):
    """(tensor name, dim) where cat piece `piece` is zeros_like / ones_like / full_like of a
    tensor whose extent on `dim` is `extent`, else None."""
    if not isinstance(piece, torch.fx.Node) or piece.op not in ("call_function", "call_method"):
        return None
    name = piece.target if isinstance(piece.target, str) else getattr(piece.target, "__name__", "")
    if name not in FILLED_LIKE_NAMES:
        return None
    src = conv.value(piece.args[0] if piece.args else piece.kwargs.get("input"))
    if isinstance(src, Tensor) and len(src.shape) > dim and src.shape[dim] == extent:
        return (src.name, dim)
    return None


def cat(conv, node, pieces, dim):
    vals = [conv.value(p) for p in pieces]
    shape, dtype = conv.meta(node)
    rank = len(shape)
    dim %= rank
    tensors = [i for i, v in enumerate(vals) if not isinstance(v, ConstantTensor)]
    consts = [i for i, v in enumerate(vals) if isinstance(v, ConstantTensor)]
    if consts:
        # constant pieces (zeros_like(...), full_like(...)) become pads of a tensor piece: the
        # ones before a tensor its padding before, the ones after the last its padding after
        if not tensors:
            raise Unsupported("cat of constant pieces only is not supported")
        attached = {j: [[], []] for j in tensors}
        extents = {i: (_const_shape(conv, pieces[i]) or [None] * rank)[dim] for i in consts}
        extents.update({j: vals[j].shape[dim] if isinstance(vals[j], Tensor) else None
                        for j in tensors})
        like = {i: _like_source(conv, pieces[i], dim, extents[i]) for i in consts}
        # a cat of equal pieces, each constant one copying a tensor piece (the qkv bias
        # cat(q_bias, zeros_like(v_bias), v_bias)): the pieces are parts of one size (q, k, v),
        # so their axes are one dim
        names = {vals[j].name for j in tensors if isinstance(vals[j], Tensor)}
        tie = None
        if len(tensors) > 1 and len(set(extents.values())) == 1 and \
                all(like[i] is not None and like[i][0] in names for i in consts):
            tie = [(vals[j].name, dim) for j in tensors]
        for i in consts:
            after = [j for j in tensors if j > i]
            attached[after[0] if after else tensors[-1]][0 if after else 1].append(i)
        ins = []
        for j in tensors:
            x = conv.tensor(vals[j], "a cat operand")
            before, behind = attached[j]
            if not before and not behind:
                ins.append(x)
                continue
            fills = {float(vals[i]) for i in before + behind}
            if len(fills) != 1:
                raise Unsupported("cat with constant pieces of different values next to one "
                                  "tensor is not supported")
            pads = [[0, 0] for _ in range(rank)]
            for side, group in enumerate((before, behind)):
                for i in group:
                    s = _const_shape(conv, pieces[i])
                    if s is None:
                        raise Unsupported("a constant cat piece of unknown shape")
                    pads[dim][side] += s[dim]
            attrs = {"pads": pads}
            if any(like[i] for i in before + behind):
                attrs["pads_like"] = (dim, [[like[i] for i in before], [like[i] for i in behind]])
            if fills != {0.0}:
                attrs["value"] = fills.pop()
            out = list(x.shape)
            out[dim] += pads[dim][0] + pads[dim][1]
            ins.append(conv.emit("pad", [x], node, out, dtype, final=len(tensors) == 1,
                                 **attrs))
        if len(ins) == 1:
            return ins[0]
        out = emit_cat(conv, node, ins, shape, dtype, dim)
        if tie:
            conv.ops[-1]["tie_axes"] = tie
            conv.ops[-1]["output"] = conv.ops[-1].pop("output")  # keep "output" last
        return out
    ins = [conv.tensor(v, "a cat operand") for v in vals]
    if len(ins) == 1:
        return ins[0]
    return emit_cat(conv, node, ins, shape, dtype, dim)


def stack(conv, node, pieces, dim):
    vals = [conv.tensor(conv.value(p), "a stack operand") for p in pieces]
    shape, dtype = conv.meta(node)
    dim %= len(shape)
    cols = []
    for v in vals:
        s = list(v.shape)
        s.insert(dim, 1)
        cols.append(reshape_to(conv, node, v, s, final=False))
    if len(cols) == 1:
        return reshape_to(conv, node, vals[0], shape)
    return emit_cat(conv, node, cols, shape, dtype, dim)


CAT_MAX_INPUTS = 64  # the spec's limit on a cat's inputs


def emit_cat(conv, node, ins, shape, dtype, dim):
    """One cat op, or, past the spec's 64 inputs (an RNN's outputs stacked over 256 steps), cats
    of up to 64 pieces joined by another cat: the same tensor."""
    if len(ins) > CAT_MAX_INPUTS:
        groups = [ins[i:i + CAT_MAX_INPUTS] for i in range(0, len(ins), CAT_MAX_INPUTS)]
        parts = []
        for g in groups:
            s = list(shape)
            s[dim] = sum(t.shape[dim] for t in g)
            parts.append(g[0] if len(g) == 1 else
                         conv.emit("cat", g, node, s, dtype, final=False, axis=dim))
        ins = parts
    return conv.emit("cat", ins, node, shape, dtype, axis=dim)


def split(conv, node, name, args, kw):
    x = conv.tensor(args[0] if args else kw.get("input"), "the split tensor")
    if name == "unbind":
        dim = _arg(args, kw, 1, "dim", 0) % len(x.shape)
        out = []
        for i in range(x.shape[dim]):
            s = slice_op(conv, node, x, dim, i, i + 1, 1, final=False)
            rest = list(x.shape[:dim]) + list(x.shape[dim + 1:])
            out.append(reshape_to(conv, node, s, rest, final=False))
        return tuple(out)
    dim = _arg(args, kw, 2, "dim", 0) % len(x.shape)
    n = x.shape[dim]
    arg = _arg(args, kw, 1, "split_size_or_sections" if name == "split" else
               "chunks" if name == "chunk" else "indices_or_sections")
    if name == "split":
        sizes = list(arg) if isinstance(arg, (list, tuple)) else \
            [min(arg, n - s) for s in range(0, n, arg)]
    elif name == "chunk":
        step = -(-n // arg)
        sizes = [min(step, n - s) for s in range(0, n, step)]
    else:
        if not _is_int(arg):
            raise Unsupported("tensor_split at indices is not supported")
        sizes = [n // arg + (1 if i < n % arg else 0) for i in range(arg)]
    out, at = [], 0
    for s in sizes:
        out.append(slice_op(conv, node, x, dim, at, at + s, 1, final=False))
        at += s
    return tuple(out)


def pad(conv, node, args, kw):
    x = conv.tensor(args[0] if args else kw.get("input"), "the padded tensor")
    p = list(_arg(args, kw, 1, "pad"))
    mode = _arg(args, kw, 2, "mode", "constant")
    value = _arg(args, kw, 3, "value", None)
    if mode != "constant":
        raise Unsupported(f"F.pad with mode {mode!r} is not supported (constant only)")
    if len(p) % 2 or len(p) // 2 > len(x.shape):
        raise Unsupported(f"F.pad with pad {p}: expected pairs for at most {len(x.shape)} dims")
    rank = len(x.shape)
    pads = [[0, 0] for _ in range(rank)]
    for k in range(len(p) // 2):  # F.pad lists the last dim first
        pads[rank - 1 - k] = [int(p[2 * k]), int(p[2 * k + 1])]
    if any(v < 0 for pr in pads for v in pr):
        raise Unsupported("F.pad with a negative pad (a crop) is not supported")
    shape, dtype = conv.meta(node)
    attrs = {"pads": pads}
    if value:
        attrs["value"] = float(value)
    return conv.emit("pad", [x], node, shape, dtype, **attrs)


# ---- naming: concrete target shapes -> dim names, products and -1 (called by spec_build) ----

def _groups(src, dst):
    """Pairs (src axes, dst axes) of a reshape whose sizes multiply to the same (size-1 axes
    dropped), left to right; None where the sizes do not group."""
    i, j, out = 0, 0, []
    src_axes = [k for k, s in enumerate(src) if s != 1]
    dst_axes = [k for k, s in enumerate(dst) if s != 1]
    while i < len(src_axes) or j < len(dst_axes):
        a, b = [], []
        pa = pb = 1
        while True:
            if pa <= pb and i < len(src_axes) and (not a or pa < pb):
                a.append(src_axes[i])
                pa *= src[src_axes[i]]
                i += 1
            elif j < len(dst_axes) and (not b or pb < pa):
                b.append(dst_axes[j])
                pb *= dst[dst_axes[j]]
                j += 1
            else:
                break
            if pa == pb and a and b:
                break
        if pa != pb:
            return None
        out.append((a, b))
    return out


def union_axes(classes, op):
    """spec_dims rules of the shape ops: the axes an op keeps are one class with its input's
    (and the axes of a cat's equal pieces, its "tie_axes", one class)."""
    kind, ins, out = op["op"], op["inputs"], op["output"]
    shapes = classes.shapes
    tie = op.get("tie_axes") or []
    for a, b in zip(tie, tie[1:]):
        classes.union(tuple(a), tuple(b))
    if kind == "reshape":
        groups = _groups(shapes[ins[0]], shapes[out]) or []
        for a, b in groups:
            if len(a) == 1 and len(b) == 1:  # kept: the target may name it apart (spec_dims)
                classes.union((ins[0], a[0]), (out, b[0]), soft=True)
            elif len(b) == 1:  # a merge: undone by a later split into the same sizes
                classes.composed((out, b[0]), [(ins[0], i) for i in a], split=False)
            elif len(a) == 1:  # a split
                classes.composed((ins[0], a[0]), [(out, j) for j in b], split=True)
    elif kind == "expand":
        classes.positional(ins[0], out)
    elif kind == "permute":
        for i, d in enumerate(op["dims"]):
            classes.union((out, i), (ins[0], d))
    elif kind in ("slice", "cat", "pad"):
        rank = len(shapes[out])
        for i in range(rank):
            keep = (kind == "pad" and op["pads"][i] == [0, 0]) or \
                   (kind != "pad" and i != op["axis"] % rank)
            if keep:
                for t in ins:
                    classes.union((t, i), (out, i))


def _dim_name(n):
    """Whether axis name `n` is a dim's name (not a number, not a merge's product "7*W")."""
    return isinstance(n, str) and "*" not in n


def _out_names(op, shapes, axis_name, ops):
    """slice / cat / pad: a name for each output axis whose extent the op changes, where a tensor
    upstream (through ops that keep the rank: shape ops, scans, element-wise ops) has that axis
    at the same extent under a dim name: a pad that restores what a slice took (an exclusive
    scan written with narrow and cat) gives the axis its name back."""
    by_output = {o["output"]: o for o in ops}
    out = op["output"]
    rank = len(shapes[out])
    names, any_named = [], False
    for i in range(rank):
        name = ""
        own = axis_name(out, i) if shapes[out][i] != shapes[op["inputs"][0]][i] else None
        if _dim_name(own):  # the axis an input's dim names downstream (a norm's weight)
            name = own
        elif shapes[out][i] != shapes[op["inputs"][0]][i]:
            todo, seen = list(op["inputs"]), set()
            while todo and not name:
                t = todo.pop()
                if t in seen or t not in shapes or len(shapes[t]) != rank:
                    continue
                seen.add(t)
                n = axis_name(t, i)
                if shapes[t][i] == shapes[out][i] and _dim_name(n):
                    name = n
                elif t in by_output:
                    todo.extend(by_output[t]["inputs"])
        names.append(name)
        any_named = any_named or bool(name)
    return dict(op, out_names=names) if any_named else op


def name_merged_axes(ops, shapes, classes, names):
    """class -> the product ("7*W", as name_shape_attrs writes it) for the axis a reshape merges
    from axes of which one at least is named (`names`: class -> name), where its class has no
    name: the reshape and expand targets then write that axis alike wherever it appears (as the
    merge's derived dim, also where a later reshape keeps or splits it), not a number in one
    place and the product in another, which the kernels would read as two dims."""
    merged = {}
    for op in ops:
        if op["op"] != "reshape" or any(t not in shapes for t in op["inputs"] + [op["output"]]):
            continue
        x, out = op["inputs"][0], op["output"]
        for a, b in _groups(shapes[x], shapes[out]) or []:
            c = classes.find((out, b[0]))
            if len(a) < 2 or len(b) != 1 or c in names or c in merged:
                continue
            parts = [names.get(classes.find((x, k)), merged.get(classes.find((x, k)),
                                                                 int(shapes[x][k]))) for k in a]
            if any(isinstance(n, str) for n in parts):
                merged[c] = "*".join(str(n) for n in parts)
    return merged


def name_shape_attrs(op, shapes, axis_name, ops=()):
    """reshape / expand `op` with a concrete "shape" -> entries a re-binding follows: an axis that
    is one axis of the input (or of its class) by that axis's name, a merged group as a product
    "C*H*W", an axis split off a bigger one as a number (the last such as -1), 1 as 1.
    slice / cat / pad: out_names (_out_names); a pad's amounts that copy a tensor's extent (a
    cat's zeros_like(v) piece, "pads_like") as that axis's name, so they follow the dims.
    axis_name(tensor, axis) -> a dim name or an int."""
    if op["op"] in ("slice", "cat", "pad"):
        hints = {k: op[k] for k in NAMING_HINTS if k in op}
        op = {k: v for k, v in op.items() if k not in NAMING_HINTS}
        if "pads_like" in hints:
            op["pads"] = _pad_exprs(op["pads"], hints["pads_like"], axis_name)
        named = _out_names(op, shapes, axis_name, ops)
        if "out_names" in named:  # keep "output" last
            named["output"] = named.pop("output")
        return named
    if op["op"] not in ("reshape", "expand"):
        return op
    x, out = op["inputs"][0], op["output"]
    src, dst = shapes[x], shapes[out]
    entries = []
    if op["op"] == "expand":
        lead = len(dst) - len(src)
        for i, s in enumerate(dst):
            if i >= lead and src[i - lead] == s:
                entries.append(-1)
            else:
                n = axis_name(out, i)
                entries.append(n if s != 1 else 1)
        return dict(op, shape=entries)
    groups = _groups(src, dst)
    if groups is None:
        return op
    entries = [1] * len(dst)
    minus = False
    for a, b in groups:
        if len(b) == 1:
            names = [axis_name(x, k) for k in a]
            own = axis_name(out, b[0])
            if len(names) > 1 and isinstance(own, str):
                # a merged axis that an input's dim also names (flatten -> Linear: the weight's
                # in-features): that name, so the consumer contracts one dim (kforge's kernels
                # match dims by name)
                entries[b[0]] = own
            elif len(names) == 1:
                # a kept axis: its input's name, or the name of its own where the axis is kept
                # apart from its input's (spec_dims: k of q @ k^T, both from one x)
                entries[b[0]] = own if isinstance(own, str) and dst[b[0]] != 1 else names[0]
            elif all(isinstance(n, int) for n in names):
                entries[b[0]] = math.prod(names)
            else:
                entries[b[0]] = "*".join(str(n) for n in names)
        else:
            for k in b:
                n = axis_name(out, k)
                entries[k] = n
            ints = [k for k in b if not isinstance(entries[k], str)]
            if ints and not minus:
                entries[ints[-1]] = -1
                minus = True
    # an axis the reshape keeps as it is, but which no dim names (split off upstream: a chunk
    # of a sequence), as -1: the entry follows the sizes as the upstream split's -1 does
    kept = [b[0] for a, b in groups if len(a) == 1 and len(b) == 1
            and isinstance(entries[b[0]], int) and entries[b[0]] != 1]
    if kept and not minus:
        entries[kept[-1]] = -1
    return dict(op, shape=entries)


def sum_text(terms):
    """"a+b+c" of dim names and integers, equal names counted ("E+E" -> "2*E"), the integers
    added into one; an int where every term is one."""
    counts, number = {}, 0
    for t in terms:
        if isinstance(t, int):
            number += t
        else:
            counts[t] = counts.get(t, 0) + 1
    if not counts:
        return number
    parts = [t if k == 1 else f"{k}*{t}" for t, k in counts.items()]
    return "+".join(parts + ([str(number)] if number else []))


def _pad_exprs(pads, pads_like, axis_name):
    """`pads` with the amounts on pads_like's axis whose every piece copies a named axis written
    as the sum of those axes' names ("D96", "2*D96"); the others as they are."""
    dim, sides = pads_like
    out = [list(p) for p in pads]
    for side, sources in enumerate(sides):
        if not sources or any(s is None for s in sources):
            continue
        terms = [axis_name(t, a) for t, a in sources]
        if all(isinstance(n, str) for n in terms):
            out[dim][side] = sum_text(terms)
    return out


def drop_dead(ops, outputs):
    """The ops without the ones nothing reads: shape code whose only reader became a number
    (zeros_like(x.select(d, 0).unsqueeze(d)) is a constant; its slice and reshapes are dead)."""
    live, keep = set(outputs), []
    for op in reversed(ops):
        if op["output"] in live:
            keep.append(op)
            live.update(op["inputs"])
    return keep[::-1]


def spec_extent(entry, dims):
    """A spec extent in numbers: an integer, a dim name, or a sum of products of dim names and
    integers ("4*H", "input_size+hidden_size", a derived dim's expression); None where a name
    is not in `dims` or not yet a number there (a dim the spec derives: a conv's output size)."""
    if isinstance(entry, int):
        return entry
    total = 0
    for term in str(entry).split("+"):
        fs = [int(f) if f.isdigit() else dims.get(f) for f in (p.strip() for p in term.split("*"))]
        if any(not isinstance(f, int) for f in fs):
            return None
        total += math.prod(fs)
    return total


def resolve_dims(dims):
    """`dims` with every derived dim (a string value: "3*n_embd", "D64+D32", a product of dims
    a conv or pool derives) that its names resolve, in numbers; those whose names are not known
    (yet) are left out."""
    out = {k: v for k, v in dims.items() if isinstance(v, int)}
    todo = {k: v for k, v in dims.items() if not isinstance(v, int)}
    while todo:
        done = {k: spec_extent(v, out) for k, v in todo.items()}
        done = {k: v for k, v in done.items() if v is not None}
        if not done:
            break
        out.update(done)
        todo = {k: v for k, v in todo.items() if k not in done}
    return out


def bound_dims(dims):
    """The dims of a spec that can be re-bound: its declared numbers, not its derived dims."""
    return {k: v for k, v in dims.items() if isinstance(v, int)}


def run_spec_op(op, a, dims):
    """Shape op `op` of a spec on tensors `a` in PyTorch (spec_torch: the baselines' module);
    `dims` the spec's dims (a target shape entry names them)."""
    k, x = op["op"], a[0]

    def size(e):
        return spec_extent(e, dims)
    if k == "reshape":  # one derived entry is the -1 that makes the counts agree
        sizes = [size(e) for e in op["shape"]]
        return x.reshape([-1 if s is None else s for s in sizes])
    if k == "expand":
        return x.expand(*[size(e) for e in op["shape"]])
    if k == "permute":
        return x.permute(*op["dims"])
    if k == "slice":  # start / end may be dim expressions ("n_embd", "2*n_embd")
        idx = [slice(None)] * (op["axis"] % x.dim())
        end = op.get("end")
        idx.append(slice(size(op.get("start", 0)), None if end is None else size(end),
                         op.get("step", 1)))
        return x[tuple(idx)]
    if k == "cat":
        return torch.cat(a, op["axis"])
    if k == "pad":  # amounts may be dim expressions ("D96")
        flat = [size(v) for pair in reversed(op["pads"]) for v in pair]
        return torch.nn.functional.pad(x, flat, value=op.get("value", 0.0))
    raise ValueError(f"op {k} is not a shape op")
