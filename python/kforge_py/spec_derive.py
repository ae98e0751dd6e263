"""Derived extents of an imported spec written as the dims they come from (spec_build calls
`derive_extents` once the graph's shape attributes are named).

The importer names an axis that no module-level integer sizes by its value (`D2304`), as a dim of
its own. Where that extent is made from other dims - the projection that a split cuts into q, k,
v (`3*n_embd`), a cat's channels (DenseNet's `D64+D32+D32_1`, an RNN cell's
`input_size+hidden_size`), a flatten's features (VGG's `D512_5*D224_out..*D224_1_out..`, which
the Linear weight after it names) - a number ties it to the file's size: the correctness gates
re-bind the dims to a small shape and the literal stays, so the dims it comes from stayed at full
size too (eval/ small_shape). Here such a dim's value in "dims" becomes its expression (a sum of
products of dim names and integers, docs/problem-spec.md), recomputed whenever the dims are
re-bound, and the bounds of the slices that cut an axis into named pieces become expressions
(`"start": "n_embd", "end": "2*n_embd"`), so they follow the dims as well. A depthwise conv's
groups (= its channels) is written as the channels' dim, a grouped conv's input channels as the
groups times its weight's channels per group (`3*D20`: the weight names them apart), and a
reshape that merges back the pieces a reshape split a named axis into (ShuffleNet's channel
shuffle, [B, C] -> [B, g, C/g] -> transposed -> [B, C]) writes the merged extent as that axis's
name (as a number it tied the channels: KernelBench L3 26). The last piece of a reshape that
splits such an axis (a head dim: [B, N, C] -> [B, N, heads, C / heads]) is named as a dim of its
own (name_split_pieces, before the shape attributes are named) and the axis written as the
product of its pieces ("D96": "3*D32"): as a number the head dim tied the channels (L3 29 Swin);
so is one written as a number inside a merge's product ("D3*32" after attention, L3 30 SwinV2).
A pad by amounts written as dims (a qkv bias cat(q_bias, zeros_like(v_bias), v_bias), fx_shape)
names its padded axis as a dim of their sum ("2*D96"), the cat after it sums them ("3*D96"), and
a split of that cat's axis into [3, heads, head dim] derives the piece as heads times head dim.

Only a dim named by its value (D<size>, not a size variable of the file) is derived, each once,
never through itself; everything else is left as it was (a spec with none of these patterns is
unchanged)."""
import re

from kforge_py.fx_conv import CONV_OPS
from kforge_py.fx_shape import _groups, name_shape_attrs


def _sum_text(terms):
    """"a+b+c" of dim names and integers, equal names counted ("n_embd+n_embd" -> "2*n_embd")."""
    counts = {}
    for t in terms:
        counts[t] = counts.get(t, 0) + 1
    parts = []
    for t, k in counts.items():
        if isinstance(t, int):
            parts.append(str(t * k))
        else:
            parts.append(t if k == 1 else f"{k}*{t}")
    return "+".join(parts)


def _fresh(dims, size):
    """D<size>, or D<size>_1, _2, ... where taken."""
    name, k = f"D{size}", 1
    while name in dims:
        name, k = f"D{size}_{k}", k + 1
    return name


def _names_in(expr):
    return {f for f in re.split(r"[+*]", expr) if f and not f.isdigit()}


def _by_value_name(name, dims, int_globals):
    """Whether dim `name` is one the importer named after its value (D<size>, no size variable)."""
    return isinstance(name, str) and isinstance(dims.get(name), int) and \
        re.fullmatch(r"D\d+(_\d+)?", name) is not None and name not in int_globals


def name_split_pieces(ops, shapes, classes, names, dims, int_globals, merged, literal=()):
    """Names (into `names` and `dims`) the last piece of a reshape that splits an axis named by its
    value, where that piece has no name and some reshape would write it as a number (not as its
    -1): a head dim ([B, N, C] -> [B, N, heads, C / heads]) that a later reshape keeps while its
    -1 goes to another axis ([B, heads * N, C / heads] -> [B, heads, N, C / heads] after a
    grouped conv1d that mixes each head's tokens). As a number it tied the split axis to its
    full size (a head dim of 32 kept the channels D96 at 96 while every other dim shrank:
    KernelBench L3 29 SwinMLP); named
    (D<size>, a dim of its own, as the file's number depends on its sizes), derive_extents
    writes the split axis as the product of its pieces ("D96": "3*D32"), so the small shape
    shrinks the channels with the head dim. Only the last (innermost) piece is named: the
    others stay as they are (a head count, a number the file wrote)."""
    reshapes = [op for op in ops if op["op"] == "reshape" and
                all(t in shapes for t in op["inputs"] + [op["output"]])]

    def axis_name(t, i):  # as spec_build names the shape attributes
        c = classes.find((t, i % len(shapes[t])))
        return names.get(c, merged.get(c, int(shapes[t][i])))

    numbers = set()  # the classes some reshape would write as a number (not -1)
    for op in reshapes:
        entries = name_shape_attrs(op, shapes, axis_name)["shape"]
        numbers |= {classes.find((op["output"], k)) for k, e in enumerate(entries)
                    if isinstance(e, int) and e not in (-1, 1)}
        # or as a number inside a merge's product ("D3_1*32": heads times the head dim; a
        # merge named by value, which derive_extents writes as that product)
        x, out = op["inputs"][0], op["output"]
        for a, b in _groups(shapes[x], shapes[out]) or []:
            e = entries[b[0]] if len(b) == 1 else None
            if len(a) > 1 and isinstance(e, str) and (any(f.isdigit() for f in e.split("*")) or
                                                     _by_value_name(e, dims, int_globals)):
                numbers |= {c for c in (classes.find((x, k)) for k in a)
                            if c not in names and c not in merged}
    for op in reshapes:
        x, out = op["inputs"][0], op["output"]
        for a, b in _groups(shapes[x], shapes[out]) or []:
            if len(a) != 1 or len(b) < 2:
                continue
            if not _by_value_name(names.get(classes.find((x, a[0]))), dims, int_globals):
                continue
            last = classes.find((out, b[-1]))
            if last in names or last in merged or last in literal or last not in numbers:
                continue
            size = int(shapes[out][b[-1]])
            names[last] = _fresh(dims, size)
            dims[names[last]] = size


def derive_extents(graph, inputs, dims, shapes, axis_name, int_globals):
    """Rewrites `graph` (ops in place) and `dims` as the module doc says. axis_name(tensor, axis)
    gives the spec's name of an axis (a dim name or an int); `shapes` the concrete shapes of every
    tensor; int_globals the file's size variables (their dims are never derived)."""
    def by_value(name):  # a dim the importer named after its value
        return _by_value_name(name, dims, int_globals)

    derived = {}

    def derive(name, expr):
        if not by_value(name) or name in derived or expr == name:
            return False
        seen, todo = set(), [expr]  # never through itself
        while todo:
            for n in _names_in(todo.pop()):
                if n == name:
                    return False
                if n in derived and n not in seen:
                    seen.add(n)
                    todo.append(derived[n])
        derived[name] = expr
        return True

    def name_of(op, t, axis):
        if op is not None and op.get("out_names") and op["out_names"][axis]:
            return op["out_names"][axis]
        if op is not None and op["op"] == "reshape" and isinstance(op["shape"][axis], str):
            return op["shape"][axis]  # a merged-back split (_track_splits)
        return axis_name(t, axis)

    producer = {op["output"]: op for op in graph}
    _slice_partitions(graph, shapes, producer, name_of, derive)
    split = {}  # tensor -> [(its axes a reshape split one named axis into, that name)]
    for op in graph:
        _track_splits(op, shapes, producer, name_of, split)
        if op["op"] == "cat":
            out, axis = op["output"], op["axis"] % len(shapes[op["output"]])
            pieces = [_extent_terms(producer.get(t), t, axis, producer, name_of)
                      for t in op["inputs"]]
            if not all(isinstance(p, list) for p in pieces):
                continue
            pieces = [term for p in pieces for term in p]
            whole = name_of(op, out, axis)
            if isinstance(whole, int):  # anonymous (read by no weight): a dim of its own, named
                whole = _fresh(dims, whole)  # in out_names, so a program writes it by name
                dims[whole] = shapes[out][axis]
                names = list(op.get("out_names") or [""] * len(shapes[out]))
                names[axis] = whole
                op["out_names"] = names
                op["output"] = op.pop("output")  # keep "output" last
            derive(whole, _sum_text(pieces))
        elif op["op"] == "pad":
            _name_padded_axes(op, shapes, producer, name_of, derive, dims)
        elif op["op"] == "reshape":
            _reshape_products(op, shapes, producer, name_of, derive)
            _split_products(op, shapes, producer, name_of, derive, derived)
        elif op["op"] in CONV_OPS and not CONV_OPS[op["op"]][1]:
            x = op["inputs"][0]
            c = name_of(producer.get(x), x, 1)
            g = op.get("groups", 1)
            if g > 1 and g == shapes[x][1] and isinstance(c, str):
                op["groups"] = c  # depthwise: one group per channel
            elif g > 1 and isinstance(c, str):  # grouped: the channels are g times the
                w = op["inputs"][1]              # weight's channels per group
                k = name_of(producer.get(w), w, 1)
                if isinstance(k, str):
                    derive(c, f"{g}*{k}")
    for name, expr in derived.items():
        dims[name] = expr
    return graph, dims


def _extent_terms(op, t, axis, producer, name_of):
    """Axis `axis` of tensor t (made by `op`) as a list of dim-name terms whose sum it is: for a
    pad by amounts written as dims (a qkv bias's zeros_like(v) piece, fx_shape._pad_exprs) those
    and its input's terms ("D96", "D96"), else its name; None where a term is a number."""
    if op is not None and op["op"] == "pad" and op["pads"][axis] != [0, 0]:
        before, after = op["pads"][axis]
        x = op["inputs"][0]
        inner = _extent_terms(producer.get(x), x, axis, producer, name_of)
        if inner is not None and all(isinstance(v, str) or v == 0 for v in (before, after)):
            return [f for v in (before, after) if v for f in _expand_counts(v)] + inner
    name = name_of(op, t, axis)
    return [name] if isinstance(name, str) else None


def _name_padded_axes(op, shapes, producer, name_of, derive, dims):
    """A pad by amounts written as dims whose padded axis has no name: a dim of its own (in
    out_names), derived as the sum of the amounts and the input's extent ("2*D96"), so that a
    program writes that axis by name - as a number (the planner's `cat_pad[192]`) it tied the
    dims to their size."""
    out = op["output"]
    names = list(op.get("out_names") or [""] * len(shapes[out]))
    changed = False
    for axis, pair in enumerate(op["pads"]):
        if names[axis] or not any(isinstance(v, str) for v in pair):
            continue
        terms = _extent_terms(op, out, axis, producer, name_of)
        if terms is None:
            continue
        whole = _fresh(dims, shapes[out][axis])
        dims[whole] = shapes[out][axis]
        if derive(whole, _sum_text(terms)):
            names[axis] = whole
            changed = True
        else:
            del dims[whole]
    if changed:
        op["out_names"] = names
        op["output"] = op.pop("output")  # keep "output" last


def _expand_counts(expr):
    """A sum of names, each term k*name given as k copies ("2*E+F" -> E, E, F); _sum_text
    counts them again."""
    out = []
    for term in expr.split("+"):
        k, _, name = term.rpartition("*")
        out += [name] * int(k) if k.isdigit() else [term]
    return out


def _slice_partitions(graph, shapes, producer, name_of, derive):
    """Slices (step 1) of one tensor's axis that cut it into consecutive pieces, each named: the
    bounds as sums of the pieces before (and the axis, where named by value, as their sum)."""
    groups = {}
    for op in graph:
        if op["op"] == "slice" and op.get("step", 1) == 1:
            t = op["inputs"][0]
            groups.setdefault((t, op["axis"] % len(shapes[t])), []).append(op)
    for (t, axis), ops in groups.items():
        n = shapes[t][axis]
        spans = []
        for op in ops:
            lo, hi, _ = slice(op.get("start", 0), op.get("end"), 1).indices(n)
            spans.append((lo, hi, op))
        spans.sort(key=lambda s: (s[0], s[1]))
        # one piece per span, no gaps, no overlaps, covering the axis (a split / chunk)
        cover = [spans[0]] if spans and spans[0][0] == 0 else []
        for s in spans[1:]:
            if cover and s[0] == cover[-1][1] and (s[0], s[1]) != (cover[-1][0], cover[-1][1]):
                cover.append(s)
        if len(cover) < 2 or cover[-1][1] != n or len(cover) != len({(a, b) for a, b, _ in spans}):
            continue
        names = [name_of(op, op["output"], axis) for _, _, op in cover]
        if not all(isinstance(p, str) for p in names):
            continue
        whole = name_of(producer.get(t), t, axis)
        derive(whole, _sum_text(names))
        for i, (lo, hi, _) in enumerate(cover):
            for _, _, op in (s for s in spans if (s[0], s[1]) == (lo, hi)):
                op.pop("start", None)
                op.pop("end", None)
                if i:
                    op["start"] = _sum_text(names[:i])
                if i < len(cover) - 1:
                    op["end"] = _sum_text(names[:i + 1])
                op["output"] = op.pop("output")  # keep "output" last


def _reshape_products(op, shapes, producer, name_of, derive):
    """A reshape entry that a dim named by its value names (a flatten read by a Linear whose
    weight names the features) where the input's axes it merges are named: that dim as their
    product; an axis it keeps, named apart from its input's (spec_dims), as that axis's name."""
    x, out = op["inputs"][0], op["output"]
    for a, b in _groups(shapes[x], shapes[out]) or []:
        if len(b) != 1 or not isinstance(op["shape"][b[0]], str):
            continue
        parts = [name_of(producer.get(x), x, k) for k in a]
        if any(isinstance(p, str) for p in parts) and all(isinstance(p, (str, int)) for p in parts):
            derive(op["shape"][b[0]], "*".join(str(p) for p in parts))


def _split_products(op, shapes, producer, name_of, derive, derived):
    """A reshape that splits an axis named by its value into pieces of which one at least is
    named (name_split_pieces names a head dim): that axis as the product of the pieces (the
    channels "6*D512" of [-1, D512], a head count and the head dim; a window split [D9, D7] of a
    padded row "D63"). Not where the last piece is the reshape's -1: that number (a head dim no
    dim names, [3, heads, -1] of a qkv projection) would tie the axis to it, where as a dim of
    its own the axis can still be halved."""
    x, out = op["inputs"][0], op["output"]
    for a, b in _groups(shapes[x], shapes[out]) or []:
        if len(a) != 1 or len(b) < 2 or op["shape"][b[-1]] == -1:
            continue
        parts = [name_of(op, out, k) for k in b]
        if any(isinstance(p, str) for p in parts) and all(isinstance(p, (str, int)) for p in parts):
            whole = name_of(producer.get(x), x, a[0])
            # derived already as k times a dim (a qkv bias cat of three equal pieces, "3*D96")
            # and split into [k, heads, head dim]: that dim is the product of the rest
            k, _, piece = str(derived.get(whole, "")).partition("*")
            if k.isdigit() and parts[0] == int(k) and re.fullmatch(r"\w+", piece):
                derive(piece, "*".join(str(p) for p in parts[1:]))
            derive(whole, "*".join(str(p) for p in parts))


def _track_splits(op, shapes, producer, name_of, split):
    """A reshape that splits a named axis into pieces (a channel shuffle's [B, g, C/g, H, W], a
    window partition) records them on its output, a permute carries them to the axes they move
    to, and a reshape that merges exactly those pieces again (in any order) writes the merged
    extent, where a number, as the split axis's name: the number tied that axis to its size."""
    if op["op"] == "permute" and op["inputs"][0] in split:
        perm = [d % len(op["dims"]) for d in op["dims"]]
        split[op["output"]] = [(frozenset(perm.index(k) for k in axes), name)
                               for axes, name in split[op["inputs"][0]]]
    if op["op"] != "reshape":
        return
    x, out = op["inputs"][0], op["output"]
    for a, b in _groups(shapes[x], shapes[out]) or []:
        if len(a) == 1 and len(b) > 1:
            name = name_of(producer.get(x), x, a[0])
            if isinstance(name, str):
                split.setdefault(out, []).append((frozenset(b), name))
        elif len(a) > 1 and len(b) == 1 and isinstance(op["shape"][b[0]], int):
            for axes, name in split.get(x, []):
                if axes == frozenset(a):
                    op["shape"][b[0]] = name
