"""Pooling -> the spec's max_pool, avg_pool, adaptive_avg_pool and adaptive_max_pool ops (used by
fx_import.Converter and fx_ops.convert).

nn.MaxPool1d/2d/3d, nn.AvgPool1d/2d/3d, nn.AdaptiveAvgPool1d/2d/3d, nn.AdaptiveMaxPool1d/2d/3d and
their functional forms (F.max_pool2d, F.avg_pool3d, F.adaptive_avg_pool1d, ...) become one op on
x [N, C, *] with one attribute entry per spatial axis: kernel_size, stride (PyTorch's default:
kernel_size), padding, dilation (max pool), ceil_mode, count_include_pad and divisor_override
(avg pool), output_size (adaptive; a None entry keeps the input's size). Refused by name:
return_indices=True (the spec has no index output), an unbatched [C, *] input, LPPool,
FractionalMaxPool and MaxUnpool. Global average pooling written as x.mean(dim=[2, 3]) imports as
a chain of mean reductions (fx_ops), not here.

pool_out_dims names a pool's derived output dims for spec_build like conv2d_out_dims does."""
import torch.nn as nn

from kforge_py.fx_types import Unsupported

_KINDS = {"max_pool": "max_pool", "avg_pool": "avg_pool",
          "adaptive_avg_pool": "adaptive_avg_pool", "adaptive_max_pool": "adaptive_max_pool"}

# functional name -> (spec op, spatial rank); the *_with_indices forms are max pools asked for
# their indices
FUNCTIONS = {}
for _n in (1, 2, 3):
    for _base in _KINDS:
        FUNCTIONS[f"{_base}{_n}d"] = (_KINDS[_base], _n)
    FUNCTIONS[f"max_pool{_n}d_with_indices"] = ("max_pool", _n)
    FUNCTIONS[f"adaptive_max_pool{_n}d_with_indices"] = ("adaptive_max_pool", _n)

OTHER_FUNCTIONS = {
    **{f"lp_pool{n}d": f"lp_pool{n}d (a power-average pool) is not supported" for n in (1, 2, 3)},
    **{f"fractional_max_pool{n}d": f"fractional_max_pool{n}d (random windows) is not supported"
       for n in (2, 3)},
    **{f"fractional_max_pool{n}d_with_indices": f"fractional_max_pool{n}d is not supported"
       for n in (2, 3)},
    **{f"max_unpool{n}d": f"max_unpool{n}d (the inverse of a max pool) is not supported"
       for n in (1, 2, 3)},
}

_MODULES = {nn.MaxPool1d: ("max_pool", 1), nn.MaxPool2d: ("max_pool", 2),
            nn.MaxPool3d: ("max_pool", 3), nn.AvgPool1d: ("avg_pool", 1),
            nn.AvgPool2d: ("avg_pool", 2), nn.AvgPool3d: ("avg_pool", 3),
            nn.AdaptiveAvgPool1d: ("adaptive_avg_pool", 1),
            nn.AdaptiveAvgPool2d: ("adaptive_avg_pool", 2),
            nn.AdaptiveAvgPool3d: ("adaptive_avg_pool", 3),
            nn.AdaptiveMaxPool1d: ("adaptive_max_pool", 1),
            nn.AdaptiveMaxPool2d: ("adaptive_max_pool", 2),
            nn.AdaptiveMaxPool3d: ("adaptive_max_pool", 3)}
_OTHER_MODULES = (nn.LPPool1d, nn.LPPool2d, nn.FractionalMaxPool2d, nn.FractionalMaxPool3d,
                  nn.MaxUnpool1d, nn.MaxUnpool2d, nn.MaxUnpool3d) + \
    ((nn.LPPool3d,) if hasattr(nn, "LPPool3d") else ())


def is_pool_module(mod):
    return type(mod) in _MODULES or isinstance(mod, _OTHER_MODULES)


def _ints(v, n, what, fn, allow_none=False):
    """An int or a sequence of 1 or n ints -> a list of n ints (None entries kept if allow_none)."""
    if isinstance(v, (list, tuple)):
        v = list(v)
        if len(v) == 1:
            v = v * n
        if len(v) != n:
            raise Unsupported(f"{fn} {what} {v!r} is not an int or {n} ints")
    else:
        v = [v] * n
    for e in v:
        if e is None and allow_none:
            continue
        if not isinstance(e, int) or isinstance(e, bool):
            raise Unsupported(f"{fn} {what} {v!r} is not an int or {n} ints")
    return v


def _compact(v):
    return v[0] if all(e == v[0] for e in v) else v


def pool(conv, node, kind, n, x, shape, dtype, fn, kernel_size=None, stride=None, padding=0,
         dilation=1, ceil_mode=False, count_include_pad=True, divisor_override=None,
         output_size=None, return_indices=False):
    """Emits one pool op of x with PyTorch's arguments (normalized and checked)."""
    if return_indices:
        raise Unsupported(f"{fn} with return_indices=True is not supported: the spec's pools "
                          "return the pooled values only (no index output)")
    rank = len(x.shape)
    if rank != n + 2:
        what = (f"an unbatched [C, {'*' if n > 1 else 'L'}] input" if rank == n + 1
                else f"an input of rank {rank}")
        raise Unsupported(f"{fn} of {what} is not supported (the spec's pools take [N, C, *] "
                          f"with {n} spatial axes)")
    if kind.startswith("adaptive"):
        out = _ints(output_size, n, "output_size", fn, allow_none=True)
        out = [x.shape[2 + i] if e is None else e for i, e in enumerate(out)]
        if min(out) < 1:
            raise Unsupported(f"{fn} output_size {out} must be positive")
        return conv.emit(kind, [x], node, shape, dtype, output_size=_compact(out))
    k = _ints(kernel_size, n, "kernel_size", fn)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) \
        else _ints(stride, n, "stride", fn)
    p = _ints(padding, n, "padding", fn)
    attrs = {"kernel_size": _compact(k)}
    if s != k:
        attrs["stride"] = _compact(s)
    if any(p):
        attrs["padding"] = _compact(p)
    if kind == "max_pool":
        d = _ints(dilation, n, "dilation", fn)
        if any(e != 1 for e in d):
            attrs["dilation"] = _compact(d)
    if ceil_mode:
        attrs["ceil_mode"] = True
    if kind == "avg_pool":
        if not count_include_pad:
            attrs["count_include_pad"] = False
        if divisor_override is not None:
            if not isinstance(divisor_override, int) or divisor_override < 1:
                raise Unsupported(f"{fn} divisor_override {divisor_override!r} is not a "
                                  "positive int")
            attrs["divisor_override"] = divisor_override
    return conv.emit(kind, [x], node, shape, dtype, **attrs)


def pool_module(conv, node, mod, x):
    """nn.MaxPool2d, nn.AdaptiveAvgPool3d, ... -> one pool op; the others refused by name."""
    cls = type(mod).__name__
    if type(mod) not in _MODULES:
        raise Unsupported(f"nn.{cls} (module {node.target}) is not supported: the spec has "
                          "max, average and adaptive pools only")
    if len(node.args) != 1 or node.kwargs:
        raise Unsupported(f"nn.{cls} (module {node.target}) called with more than its input "
                          "is not supported")
    kind, n = _MODULES[type(mod)]
    fn = f"nn.{cls}"
    if getattr(mod, "return_indices", False):
        raise Unsupported(f"{fn} (module {node.target}) with return_indices=True is not "
                          "supported: the spec's pools return the pooled values only (no index "
                          "output)")
    shape, dtype = conv.meta(node)
    if kind.startswith("adaptive"):
        return pool(conv, node, kind, n, x, shape, dtype, fn, output_size=mod.output_size,
                    return_indices=getattr(mod, "return_indices", False))
    return pool(conv, node, kind, n, x, shape, dtype, fn, mod.kernel_size, mod.stride,
                mod.padding, getattr(mod, "dilation", 1), mod.ceil_mode,
                getattr(mod, "count_include_pad", True), getattr(mod, "divisor_override", None),
                return_indices=getattr(mod, "return_indices", False))


# positional parameters after the input, as PyTorch's functional signatures order them
_PARAMS = {"max_pool": ("kernel_size", "stride", "padding", "dilation", "ceil_mode",
                        "return_indices"),
           "avg_pool": ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                        "divisor_override"),
           "adaptive_avg_pool": ("output_size",),
           "adaptive_max_pool": ("output_size", "return_indices")}


def pool_function(conv, node, name):
    """F.max_pool2d(x, 2, ceil_mode=True), torch.avg_pool1d(...), F.adaptive_avg_pool2d(x, 1),
    ... -> one pool op (before any tuple output is looked at: *_with_indices is refused here)."""
    if name in OTHER_FUNCTIONS:
        raise Unsupported(OTHER_FUNCTIONS[name] + f" (node {node.name})")
    kind, n = FUNCTIONS[name]
    args = [conv.value(a) for a in node.args]
    kw = {k: conv.value(v) for k, v in node.kwargs.items()}
    params = dict(zip(_PARAMS[kind], args[1:]))
    for k, v in kw.items():
        if k not in _PARAMS[kind] and k != "input":
            raise Unsupported(f"{name} argument {k}={v!r} is not supported")
        if k != "input":
            params[k] = v
    if name.endswith("_with_indices"):  # F.max_pool2d(..., return_indices=True) traces so
        params["return_indices"] = True
        name = name[:-len("_with_indices")]
    x = conv.tensor(args[0] if args else kw.get("input"), f"the {name} input")
    if params.get("return_indices"):
        return pool(conv, node, kind, n, x, None, None, name, return_indices=True, **{
            k: v for k, v in params.items() if k != "return_indices"})
    shape, dtype = conv.meta(node)
    return pool(conv, node, kind, n, x, shape, dtype, name, **params)


def keeps_size(op, i, in_size):
    """Whether pool `op` keeps spatial axis i at the input's size for every input size (max/avg:
    stride 1 and 2 * padding = dilation * (kernel - 1)); adaptive: an output_size equal to the
    input's (literal, so only at this size)."""
    def at(key, default):
        v = op.get(key, default)
        return v[i] if isinstance(v, (list, tuple)) else v
    if op["op"].startswith("adaptive"):
        return at("output_size", 0) == in_size
    k = at("kernel_size", 1)
    return at("stride", k) == 1 and 2 * at("padding", 0) == at("dilation", 1) * (k - 1)


POOL_OPS = set(_KINDS.values())


def pool_out_dims(ops, shapes, classes, names, dims):
    """max_pool / avg_pool output -> the names of its spatial dims (the op's "out_dims") where an
    axis does not keep x's size: x's name + "_out" (digits appended if taken), or the name
    another op's naming (conv2d_out_dims, run first) gave that axis; an axis that keeps the size
    takes x's name. Entered in `names` for the ops that read them (not in `dims`: the spec
    derives them). Where a kept axis has no name yet, out_dims is left to the spec's defaults.
    Adaptive pools have literal output sizes and need none."""
    out, taken = {}, set(dims) | set(names.values())
    for op in ops:
        if op["op"] not in ("max_pool", "avg_pool"):
            continue
        x, y = op["inputs"][0], op["output"]
        n = len(shapes[x]) - 2
        keeps = [keeps_size(op, i, shapes[x][2 + i]) for i in range(n)]
        if all(keeps):
            continue
        names_out = []
        for i in range(n):
            xc, yc = classes.find((x, 2 + i)), classes.find((y, 2 + i))
            if keeps[i]:
                names_out.append(names.get(xc))
                continue
            if yc in names and names[yc] in dims:
                raise Unsupported(f"an input or parameter has the size of pool output {y}'s "
                                  f"spatial axis {i} ({shapes[y][2 + i]}), which the spec "
                                  "derives from the pool: not supported")
            if yc in names:  # derived by another op too: one dim, derived twice
                names_out.append(names[yc])
                continue
            base = (names[xc] if xc in names else ("H", "W", "D")[i]) + "_out"
            name, k = base, 1
            while name in taken:
                name, k = f"{base}{k}", k + 1
            taken.add(name)
            names[yc] = name
            names_out.append(name)
        if all(isinstance(e, str) for e in names_out):
            out[y] = names_out
    return out
