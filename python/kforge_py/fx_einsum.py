"""torch.einsum as the spec's own ops (registered in fx_forms.FORMS): any number of operands,
contracted two at a time in a greedy order that keeps each intermediate smallest (as opt_einsum's
greedy path does), each pair one `matmul` (or one element-wise `mul` where nothing is
contracted), the operands brought to [batch..., M, K] / [batch..., K, N] by `permute` (the free
indices but one of each operand broadcast batch dims; several contracted indices one merging
`reshape`); an index that one operand alone carries and
the result drops is summed first. Each step is exact in real arithmetic. What the spec cannot
express (a repeated index: a diagonal or a trace; the sublist format) is refused with the
equation."""
import math
import string

from kforge_py.fx_chains import reduce_chain
from kforge_py.fx_shape import reshape_to
from kforge_py.fx_types import Transposed, Tensor, Unsupported


def parse(eq, ranks):
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


class _Lowering:
    """One einsum node's ops: `size` maps each index to its extent, `rank` orders indices
    (the result's first, in its order, then the others as the equation names them). Each
    intermediate keeps its left operand's index order (matmul: batch, then its free indices),
    so only operands whose indices are not grouped so are permuted; the result is permuted to
    the equation's order once, at the end."""

    def __init__(self, conv, node, dtype, size, rank):
        self.conv, self.node, self.dtype, self.size, self.rank = conv, node, dtype, size, rank

    def emit(self, op, inputs, shape, **attrs):
        return self.conv.emit(op, inputs, self.node, tuple(shape), self.dtype, False, **attrs)

    def shape(self, term):
        return tuple(self.size[c] for c in term)

    def permute(self, x, term, want):
        if term == want:
            return x
        return self.emit("permute", [x], self.shape(want), dims=[term.index(c) for c in want])

    def reshape(self, x, shape):
        return reshape_to(self.conv, self.node, x, shape, final=False)

    def sum_out(self, x, term, keep):
        """x with the indices not in `keep` summed away."""
        dims = [i for i, c in enumerate(term) if c not in keep]
        if not dims:
            return x, term
        left = "".join(c for c in term if c in keep)
        return reduce_chain(self.conv, self.node, "sum", x, dims, False, self.shape(left),
                            self.dtype, final=False), left

    def pair(self, a, sa, b, sb, keep):
        """a (subscripts sa) times b (sb), the indices outside `keep` contracted."""
        a, sa = self.sum_out(a, sa, set(sb) | keep)
        b, sb = self.sum_out(b, sb, set(sa) | keep)
        k = "".join(c for c in sa if c in sb and c not in keep)
        if not k:
            return self.product(a, sa, b, sb)
        first = next((c for c in self.rank if (c in sa) != (c in sb)), None)
        if first is not None and first in sb:  # the result's first free index is b's
            (a, sa), (b, sb) = (b, sb), (a, sa)
        batch = "".join(c for c in sa if c in sb)
        m = "".join(c for c in sa if c not in sb)
        n = "".join(c for c in sb if c not in sa)
        batch = "".join(c for c in batch if c not in k)
        # each operand's other free indices lead its batch dims (a's first, then b's, where a
        # has size-1 axes), so the matmul broadcasts over them and no split follows
        (ea, m), (eb, n) = (m[:-1], m[-1:]), (n[:-1], n[-1:])
        x, ta = self.operand(a, sa, ea + batch, m, k)
        if ea and eb:
            x = self.reshape(x, self.shape(ea) + (1,) * len(eb) + tuple(x.shape[len(ea):]))
        y, tb = self.operand(b, sb, eb + batch, n, k)
        mm = self.emit("matmul", [x, y],
                       self.shape(ea + eb + batch) + (self.numel(m), self.numel(n)),
                       transpose_a=ta or None, transpose_b=(not tb) or None)
        out = ea + eb + batch + m + n
        return self.reshape(mm, self.shape(out)), out

    def numel(self, term):
        return math.prod(self.shape(term))

    def operand(self, x, term, batch, free, k):
        """x as [batch..., F, K] (False) or [batch..., K, F] (True, read transposed), F (the
        index `free`, or an axis of 1 where there is none) and K (`k`) one axis each: permuted
        only where x is in neither layout, reshaped where K is several indices (merged) or F
        none."""
        if term == batch + k + free:
            flipped = True
        else:
            flipped = False
            x = self.permute(x, term, batch + free + k)
        groups = (k, free) if flipped else (free, k)
        return self.reshape(x, self.shape(batch) + tuple(self.numel(g) for g in groups)), flipped

    def product(self, a, sa, b, sb):
        """The element-wise product (no index contracted) in the larger operand's order (the
        other's own indices after it): the other permuted to that order, and each given a size-1
        axis for each index it lacks (broadcast)."""
        if self.numel(sb) > self.numel(sa):
            (a, sa), (b, sb) = (b, sb), (a, sa)
        out = sa + "".join(c for c in sb if c not in sa)
        ins = []
        for x, s in ((a, sa), (b, sb)):
            x = self.permute(x, s, "".join(c for c in out if c in s))
            lead = next(i for i, c in enumerate(out) if c in s)
            ins.append(self.reshape(x, tuple(self.size[c] if c in s else 1
                                             for c in out[lead:])))
        return self.emit("mul", ins, self.shape(out)), out


def _greedy_pair(terms, out, size):
    """The pair (i, j) whose product, keeping the indices the result or another operand needs,
    is smallest (the first such pair on a tie)."""
    best = None
    for i in range(len(terms)):
        for j in range(i + 1, len(terms)):
            others = set(out).union(*(t for q, t in enumerate(terms) if q not in (i, j)))
            kept = (set(terms[i]) | set(terms[j])) & others
            cost = math.prod(size[c] for c in kept)
            if best is None or cost < best[0]:
                best = (cost, i, j, others)
    return best[1:]


def _rename_last(conv, node, t, start):
    """The result named after the node (its last op's output renamed), as other converters'
    final op is."""
    if len(conv.ops) > start and conv.ops[-1]["output"] == t.name:
        name = conv.fresh(node.name)
        conv.ops[-1]["output"] = name
        conv.shapes[name] = conv.shapes.pop(t.name)
        return Tensor(name, t.shape, t.dtype)
    return t


def einsum(conv, node):
    args = [conv.value(a) for a in node.args]
    eq, operands = (args[0] if args else node.kwargs.get("equation")), args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = list(operands[0])
    if not isinstance(eq, str):
        raise Unsupported("einsum in the sublist format (operand, [dims], ...) is not supported")
    shape, dtype = conv.meta(node)
    xs = [conv.tensor(o, f"an einsum '{eq}' operand") for o in operands]
    terms, out = parse(eq, [len(x.shape) for x in xs])
    size = {}
    for t, x in zip(terms, xs):
        for c, s in zip(t, x.shape):
            if size.setdefault(c, s) != s and 1 not in (s, size[c]):
                raise Unsupported(f"einsum '{eq}': index {c} has sizes {size[c]} and {s}")
            size[c] = max(size[c], s)
    if any(s != size[c] for t, x in zip(terms, xs) for c, s in zip(t, x.shape)):
        raise Unsupported(f"einsum '{eq}' broadcasts a size-1 axis against a larger one, "
                          "which is not supported")
    if len(xs) == 1 and len(out) == len(terms[0]) >= 2 and out == \
            terms[0][:-2] + terms[0][-1] + terms[0][-2]:
        return Transposed(xs[0])  # a matmul operand reads it as is
    rank = list(out) + [c for c in dict.fromkeys("".join(terms)) if c not in out]
    low = _Lowering(conv, node, dtype, size, rank)
    start = len(conv.ops)
    vals = list(zip(xs, terms))
    while len(vals) > 1:
        i, j, keep = _greedy_pair([t for _, t in vals], out, size)
        (a, sa), (b, sb) = vals[i], vals[j]
        vals[i] = low.pair(a, sa, b, sb, keep)
        del vals[j]
    x, term = vals[0]
    x, term = low.sum_out(x, term, set(out))
    x = low.permute(x, term, out)
    return _rename_last(conv, node, x, start)
