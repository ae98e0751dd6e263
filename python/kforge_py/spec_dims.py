"""Which axes of an imported model are one dim: a union of (tensor, axis) pairs over the ops'
shape rules, so that two axes share a dim name only where an op makes them the same axis.

Naming dims by value alone gave A[N, N] @ B[N, N] (KernelBench's square matmul) one name for
the rows, the contracted dim and the columns, and a Linear with in_features == out_features one
name for K and N: the kernel language contracts by name and could not tell which dim to
contract. Here the contracted axes are one class, the others their own, each named after a
module-level integer of its value (`N`, then `N_1`, ...).

Two axes of one tensor must have two names too: kforge's kernels index, broadcast and reduce by
dim name, so q @ k^T of one x ([T, T]) or a pairwise difference c[:, None] - c[None, :] ([L, L])
read by name would be the diagonal. Such axes are one class through a chain of unions that
passes a reshape keeping an axis (an unsqueeze, a head split) on the way from the common source;
a reshape names its output axes in the spec, so that union is the one that gives way (soft): the
ops' other rules join first, then a reshape's kept axis joins its input's only where no tensor
would hold both classes, else it takes a name of its own (T_1, equal to T at every binding)."""
import re

from kforge_py.fx_conv import CONV_OPS
from kforge_py.fx_shape import SHAPE_OPS, union_axes


class AxisClasses:
    """Union-find over (tensor name, axis) pairs of tensors whose shapes are known."""

    def __init__(self, shapes):
        self.shapes = shapes  # tensor name -> shape tuple
        self.parent = {}
        self.ones = []        # size-1 axes that must be dims (a matmul's M, N or K)
        self.compositions = []  # (whole axis, [part axes]): a reshape merged or split them
        self.members = {}     # class -> the tensors with an axis (not of size 1) in it
        self.soft = None      # soft unions deferred until the hard ones are in (None: apply)
        self.broadcast = None  # element-wise unions, deferred as soft ones but applied first
        self.kept_apart = []  # soft unions refused: (a, b) axes that stay two classes
        self.renamed = []     # element-wise unions refused: (output axis, operand axis)

    def find(self, key):
        if key not in self.parent:
            self.parent[key] = key
            t, i = key
            shape = self.shapes.get(t, ())
            self.members[key] = {t} if -len(shape) <= i < len(shape) and shape[i] != 1 else set()
        while self.parent[key] != key:
            self.parent[key] = self.parent[self.parent[key]]
            key = self.parent[key]
        return key

    def apart(self, ra, rb):
        """Whether classes ra and rb (roots) have axes in one tensor: joined, that tensor would
        hold one dim twice."""
        return ra != rb and not self.members[ra].isdisjoint(self.members[rb])

    def union(self, a, b, ones=False, soft=False, broadcast=False):
        """Joins axis a = (tensor, axis) and b where both exist and have the same size, other than
        1 unless `ones` (a matmul's axes: a matrix-vector product's N of 1 is still N). A `soft`
        union (a reshape's kept axis) waits until the hard ones are in (settle_soft) and is
        refused where it would put two axes of one tensor in one class. A `broadcast` union
        (an element-wise op's output axis a with an operand's axis b) is soft too, but settled
        before the reshapes' soft ones: refused, the operand is renamed to the output's dims where
        they meet (rename_operands)."""
        if broadcast and self.broadcast is not None:
            self.broadcast.append((a, b))
            return
        if soft and self.soft is not None:
            self.soft.append((a, b))
            return
        soft = soft or broadcast
        ta, ia = a
        tb, ib = b
        sa, sb = self.shapes.get(ta), self.shapes.get(tb)
        if sa is None or sb is None:
            return
        if not (-len(sa) <= ia < len(sa) and -len(sb) <= ib < len(sb)):
            return
        ia, ib = ia % len(sa), ib % len(sb)
        if sa[ia] != sb[ib] or (sa[ia] == 1 and not ones):
            return
        ra, rb = self.find((ta, ia)), self.find((tb, ib))
        if soft and self.apart(ra, rb):
            self.kept_apart.append(((ta, ia), (tb, ib)))
            if broadcast:
                self.renamed.append(((ta, ia), (tb, ib)))
            return
        if sa[ia] == 1:
            self.ones += [(ta, ia), (tb, ib)]
        if ra != rb:
            if len(self.members[ra]) > len(self.members[rb]):
                ra, rb = rb, ra  # the smaller set merged into the larger
            self.parent[ra] = rb
            self.members[rb] |= self.members.pop(ra)

    def composed(self, whole, parts, split):
        """Records that axis `whole` is axes `parts` merged in row-major order (a reshape that
        merges them, or with `split` one that splits `whole`). A split of an axis of the class
        that a merge made, into parts of the same sizes, gives back the merged classes
        (x.view(B*N, D) ... .view(B, N, D): B is the batch again); a merge of the parts of a
        split gives back the split axis's class. (Two merges of one group are not joined: each
        keeps the name its reader gives it, a Linear's in-features or the product.)"""
        self.compositions.append((whole, parts, split))
        self._match(len(self.compositions) - 1)

    def _match(self, k):
        whole, parts, split = self.compositions[k]
        sizes = [self.shapes[t][i] for t, i in parts]
        joined = False
        for j, (w, ps, other) in enumerate(self.compositions):
            if j == k or other == split or [self.shapes[t][i] for t, i in ps] != sizes:
                continue
            if self.find(w) == self.find(whole):
                for p, q in zip(ps, parts):
                    before = self.find(p) != self.find(q)
                    self.union(p, q, soft=True)
                    joined |= before and self.find(p) == self.find(q)
            elif all(self.find(p) == self.find(q) for p, q in zip(ps, parts)):
                before = self.find(w) != self.find(whole)
                self.union(w, whole, soft=True)
                joined |= before and self.find(w) == self.find(whole)
        return joined

    def settle(self):
        """The records matched again once every op's rule has joined its axes (a reshape read
        before the op that joins its axis to another record's)."""
        for _ in range(len(self.compositions) + 1):
            if not any([self._match(k) for k in range(len(self.compositions))]):
                return

    def settle_soft(self):
        """The deferred soft unions, in op order, each refused where it would put two axes of
        one tensor in one class - the element-wise ones first (so a spec whose element-wise
        unions close no such cycle keeps the classes it had when they were hard), then the
        reshapes' -; then the records matched again."""
        broadcast, self.broadcast = self.broadcast or [], None
        for a, b in broadcast:
            self.union(a, b, broadcast=True)
        soft, self.soft = self.soft or [], None
        for a, b in soft:
            self.union(a, b, soft=True)
        self.settle()

    def is_dim(self, key):
        """Whether axis `key` is a dim: of a size other than 1, or a matmul's axis."""
        t, i = key
        return self.shapes[t][i] != 1 or any(self.find(k) == self.find(key) for k in self.ones)

    def positional(self, a, b, count=None, broadcast=False):
        """Joins the trailing `count` axes of tensors a and b (all of the shorter one)."""
        n = min(len(self.shapes.get(a, ())), len(self.shapes.get(b, ())))
        for i in range(1, (n if count is None else min(n, count)) + 1):
            self.union((a, -i), (b, -i), broadcast=broadcast)

    def by_value(self, names):
        """Joins every axis of equal size among the tensors `names` (ops without a rule)."""
        seen = {}
        for t in names:
            for i, s in enumerate(self.shapes.get(t, ())):
                if s != 1:
                    if s in seen:
                        self.union(seen[s], (t, i))
                    else:
                        seen[s] = (t, i)


def _axes(attr):
    if attr is None:
        return None
    return [int(a) for a in attr] if isinstance(attr, (list, tuple)) else [int(attr)]


def _apply(classes, op):
    kind, ins, out = op["op"], op["inputs"], op["output"]
    shapes = classes.shapes
    if kind == "matmul":
        a, b = ins
        ra, rb, ro = len(shapes[a]), len(shapes[b]), len(shapes[out])
        ka = ra - 2 if op.get("transpose_a") else ra - 1
        ma = ra - 1 if op.get("transpose_a") else ra - 2
        kb = rb - 1 if op.get("transpose_b") else rb - 2
        nb = rb - 2 if op.get("transpose_b") else rb - 1
        classes.union((a, ka), (b, kb), ones=True)
        classes.union((out, ro - 2), (a, ma), ones=True)
        classes.union((out, ro - 1), (b, nb), ones=True)
        for i in range(1, ro - 1):  # batch dims, aligned from the right
            for t, r in ((a, ra), (b, rb)):
                if r - 2 - i >= 0:
                    classes.union((out, ro - 2 - i), (t, r - 2 - i))
    elif kind == "linear":
        x, w = ins[0], ins[1]
        classes.union((x, -1), (w, 1), ones=True)
        classes.union((out, -1), (w, 0), ones=True)
        if len(ins) > 2:
            classes.union((ins[2], 0), (w, 0))
        rx = len(shapes[x])
        for i in range(2, rx + 1):
            classes.union((out, -i), (x, -i))
    elif kind in CONV_OPS:  # x [N, C, *], w [K, C/g, *] or transposed [C, K/g, *] -> [N, K, *]
        x, w = ins[0], ins[1]
        transposed = CONV_OPS[kind][1]
        classes.union((out, 0), (x, 0))
        if transposed:
            classes.union((x, 1), (w, 0))
            if op.get("groups", 1) == 1:
                classes.union((out, 1), (w, 1))
        else:
            classes.union((out, 1), (w, 0))
            if op.get("groups", 1) == 1:
                classes.union((x, 1), (w, 1))
        if len(ins) > 2:
            classes.union((ins[2], 0), (out, 1))
        for i in range(2, len(shapes[x])):
            if conv2d_keeps_size(op, shapes[w][i], i - 2):
                classes.union((out, i), (x, i))
    elif kind in ("max_pool", "avg_pool", "adaptive_avg_pool", "adaptive_max_pool"):
        from kforge_py.fx_pool import keeps_size  # x [N, C, *] -> y [N, C, *]
        x = ins[0]
        classes.union((out, 0), (x, 0))
        classes.union((out, 1), (x, 1))
        for i in range(2, len(shapes[x])):
            if keeps_size(op, i - 2, shapes[x][i]):
                classes.union((out, i), (x, i))
    elif kind in ("sum", "mean", "max", "min", "prod", "logsumexp"):
        x = ins[0]
        rx = len(shapes[x])
        reduced = {a % rx for a in (_axes(op.get("axis")) or range(rx))}
        keep = bool(op.get("keepdim"))
        j = 0
        for i in range(rx):
            if i in reduced:
                j += 1 if keep else 0
                continue
            classes.union((x, i), (out, j))
            j += 1
    elif kind in ("layer_norm", "rms_norm"):
        x = ins[0]
        classes.positional(x, out)
        n = len(op.get("normalized_shape") or [1])
        for p in ins[1:]:
            classes.positional(p, x, n)
    elif kind == "group_norm":
        x = ins[0]
        classes.positional(x, out)
        for p in ins[1:]:
            classes.union((p, 0), (x, 1))
    elif kind in ("lstm", "gru"):
        from kforge_py.fx_rnn import dim_rules
        dim_rules(classes, op)
    elif kind in SHAPE_OPS:
        union_axes(classes, op)
    elif kind in ("add", "sub", "mul", "div", "maximum", "minimum", "masked_fill", "where"):
        # broadcast from the right (by value, a mask [L, L] would join every axis of size L);
        # soft: x + Linear(d, d)(x) would otherwise join the weight's two axes (rename_operands)
        for t in ins:
            classes.positional(out, t, broadcast=True)
    elif len(ins) == 1 and len(shapes.get(ins[0], ())) == len(shapes.get(out, ())):
        classes.positional(ins[0], out)
    else:
        classes.by_value(list(ins) + [out])


def conv2d_keeps_size(op, kernel, i):
    """Whether conv op `op` (any CONV_OPS form) keeps spatial axis i at the input's size for
    every input size: stride 1 and 2 * padding = dilation * (kernel - 1) (+ output_padding,
    transposed)."""
    def at(key, default):
        v = op.get(key, default)
        return v[i] if isinstance(v, (list, tuple)) else v
    grow = at("dilation", 1) * (kernel - 1)
    if CONV_OPS.get(op["op"], (0, False))[1]:
        grow += at("output_padding", 0)
    return at("stride", 1) == 1 and 2 * at("padding", 0) == grow


def classify(shapes, ops):
    """AxisClasses of `shapes` (every input and op output) under the shape rules of `ops`."""
    classes = AxisClasses(shapes)
    classes.soft, classes.broadcast = [], []
    for op in ops:
        if all(t in shapes for t in op["inputs"] + [op["output"]]):
            _apply(classes, op)
        else:
            classes.by_value([t for t in op["inputs"] + [op["output"]] if t in shapes])
    classes.settle_soft()
    return classes


# The role of a conv2d axis -> the module-level integer names that say it (searched, case
# folded): x [N, C, H, W] and w [K, C/groups, R, S] take `batch_size`, `in_channels`, `height`,
# `width`, `out_channels` where several integers hold the same value (64 output channels of a
# 64 x 64 image: by value alone the image height was named `out_channels`).
ROLE_PATTERNS = {
    "batch": r"batch|^n$|^bs$|^b$",
    "in_channels": r"^(in|input)_?(channels?|chans?|planes|c)$|^c(_?in)?$|^cin$|^channels$",
    "out_channels": r"^(out|output)_?(channels?|chans?|planes|c)$|^k$|^c_?out$|^cout$|filters",
    "height": r"height|^h(_?in)?$|^in_?h$|^rows$",
    "width": r"width|^w(_?in)?$|^in_?w$|^cols$",
    "depth": r"depth|^d(_?in)?$|^in_?d$|^frames$",
    "length": r"length|^l(_?in)?$|^seq_?len|^in_?l$",
    "group_channels": r"group",
}


def conv_roles(classes, ops):
    """(tensor, axis) class -> role (ROLE_PATTERNS) of the axes of the conv2d ops' x and w."""
    roles = {}
    for op in ops:
        if op["op"] not in CONV_OPS:
            continue
        tensors = {"x": op["inputs"][0], "w": op["inputs"][1]}
        rank, transposed = CONV_OPS[op["op"]]
        axes = {("x", 0): "batch", ("x", 1): "in_channels"}
        for i, role in enumerate({1: ("length",), 2: ("height", "width"),
                                  3: ("depth", "height", "width")}[rank]):
            axes[("x", 2 + i)] = role
        if transposed:  # w [C, K/groups, *]
            axes[("w", 1)] = "out_channels" if op.get("groups", 1) == 1 else "group_channels"
        else:
            axes[("w", 0)] = "out_channels"
            if op.get("groups", 1) != 1:
                axes[("w", 1)] = "group_channels"  # C / groups
        for (t, i), role in axes.items():
            if tensors[t] in classes.shapes and classes.is_dim((tensors[t], i)):
                roles.setdefault(classes.find((tensors[t], i)), role)
    return roles


def conv_kernel_axes(classes, ops):
    """The classes of the conv2d weights' kernel axes [K, C/groups, R, S]: R and S are written as
    integers, like stride and padding (they fix the output size: with a kernel that a dim could
    re-bind, a 'same' convolution would not keep x's size at every binding)."""
    out = set()
    for op in ops:
        w = op["inputs"][1] if op["op"] in CONV_OPS else None
        if w is not None and w in classes.shapes:
            out |= {classes.find((w, i)) for i in range(2, len(classes.shapes[w]))}
    return out


def name_dims(classes, tensors, int_globals, literal_ints, roles=None, literal=()):
    """(tensor, axis) class -> dim name for the axes of `tensors` (in order, sizes other than 1),
    and the dims {name: value} in first-seen order. A class is named after a module-level
    integer of its size not yet taken, else after the first such integer (or D<size>) with a
    suffix _1, _2, ... A class with a role (`roles`, conv_roles) takes the first such integer
    whose name says the role, else the first that says no role in use, else D<size>. The
    classes in `literal` (conv_kernel_axes) are not named."""
    order = list(literal_ints) + [k for k in int_globals if k not in literal_ints]
    roles = roles or {}
    patterns = {r: re.compile(ROLE_PATTERNS[r], re.I) for r in set(roles.values())}
    names, dims = {}, {}
    for t in tensors:
        for i, s in enumerate(classes.shapes[t]):
            if not classes.is_dim((t, i)):
                continue
            c = classes.find((t, i))
            if c in names or c in literal:
                continue
            cands = [k for k in order if int_globals.get(k) == s and re.match(r"[A-Za-z_]\w*$", k)]
            role = roles.get(c)
            if role is not None:  # never a name that says another role (D<size> instead)
                cands = ([k for k in cands if patterns[role].search(k)] +
                         [k for k in cands if not any(p.search(k) for p in patterns.values())])
            names[c] = _fresh_name(s, cands, dims)
            dims[names[c]] = int(s)
    return names, dims


def _fresh_name(size, cands, dims):
    """The first of `cands` (module-level integers of value `size`) not in `dims`, else the first
    (or D<size>) with a suffix _1, _2, ... not in `dims`."""
    name = next((k for k in cands if k not in dims), None)
    base = cands[0] if cands else f"D{size}"
    k = 1
    while name is None or name in dims:
        name = base if name is None and base not in dims else f"{base}_{k}"
        k += 1
    return name


def name_apart(classes, names, dims, tensors, literal=()):
    """Names (into `names` and `dims`, as name_dims does) the classes that the spec would write
    as numbers where two axes of one tensor would then read alike: an axis a reshape keeps apart
    from its input's (AxisClasses.kept_apart; written as its input's name or a number it would
    be that axis again), and an unnamed class of the same size as another unnamed one in a
    tensor of `tensors` (a window of 7x7 = 49 tokens attending 49 tokens: `49` twice, one dim to
    the kernels). Such a class takes its input's name with a suffix (T_1), else D<size> (a size
    variable of the same value would be a guess: 2 windows a row are no batch of 2). Conv kernel
    axes (`literal`) stay numbers."""
    def name(c, like=None):
        s = classes.shapes[c[0]][c[1]]
        names[c] = _fresh_name(s, [like] if like else [], dims)
        dims[names[c]] = int(s)

    for source, kept in classes.kept_apart:  # T_1 beside T
        c = classes.find(kept)
        if c not in names and c not in literal:
            name(c, names.get(classes.find(source)))
    for t in tensors:
        seen = {}
        for i, s in enumerate(classes.shapes.get(t, ())):
            if not classes.is_dim((t, i)):
                continue
            c = classes.find((t, i))
            if c in names or c in literal:
                continue
            if s in seen and seen[s] != c:
                name(c)
            else:
                seen[s] = c


def rename_operands(classes, ops):
    """`ops` with a renaming reshape before each element-wise operand whose axis an element-wise
    union refused to join to the output's (AxisClasses.renamed): x + Linear(d, d)(x) joins the
    weight's in-axis to x's (the contraction) and x's to the sum's, so the projection's output
    axis, the weight's other axis, stays a dim of its own (d_model_1, equal to d_model at every
    binding; one class would make the weight [d_model, d_model], whose orientation a kernel
    reading dims by name cannot tell). The operand is read through a reshape to the same
    extents under the output's dims (a rename: the new tensor's axes join the output's)."""
    pairs = {}
    for (out, i), (t, j) in classes.renamed:
        pairs.setdefault((out, t), []).append((i, j))
    if not pairs:
        return ops
    taken = set(classes.shapes)
    result = []
    for op in ops:
        out = op["output"]
        renames = {}
        for t in dict.fromkeys(op["inputs"]):
            if not any(classes.find((out, i)) != classes.find((t, j))
                       for i, j in pairs.get((out, t), ())):
                continue
            name, k = f"{t}_as_{out}", 1
            while name in taken:
                name, k = f"{t}_as_{out}_{k}", k + 1
            taken.add(name)
            shape = tuple(classes.shapes[t])
            classes.shapes[name] = shape
            lead = len(classes.shapes[out]) - len(shape)
            for a, s in enumerate(shape):
                if s != 1 and classes.shapes[out][lead + a] == s:
                    classes.union((name, a), (out, lead + a))
                elif s != 1:
                    classes.union((name, a), (t, a))
            result.append({"op": "reshape", "inputs": [t], "shape": list(shape),
                           "output": name})
            renames[t] = name
        if renames:
            op = dict(op, inputs=[renames.get(t, t) for t in op["inputs"]])
            op["output"] = op.pop("output")  # keep "output" last
        result.append(op)
    return result
