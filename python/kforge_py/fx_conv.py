"""Convolutions -> the spec's conv ops (used by fx_import.Converter and fx_ops.convert).

nn.Conv1d/2d/3d, F.conv1d/2d/3d and torch.conv1d/2d/3d become one `conv1d` / `conv2d` / `conv3d`
op: x [N, C, *], the weight [K, C/groups, *] and the optional bias [K] (a module's weight and bias
become params, as nn.Linear's do), with stride, padding, dilation and groups as attributes (one
value per spatial axis). nn.ConvTranspose1d/2d/3d and F.conv_transpose1d/2d/3d become
`conv_transpose1d/2d/3d`: the weight [C, K/groups, *], with output_padding too. padding='valid'
is 0; padding='same' is PyTorch's d*(k-1) split in two, which the spec writes only where it is
even (symmetric); PyTorch pads an odd amount one more after than before, which the spec's
symmetric padding cannot say, so that is refused. Grouped and depthwise convolutions import (the
spec says groups; later stages refuse what they cannot run). padding_mode other than 'zeros' (a
reflected, replicated or circular border), unbatched inputs, a transposed module called with
output_size, conv_tbc and torch.convolution are refused by name."""
import torch.nn as nn

from kforge_py.fx_types import Unsupported

# spec op -> (spatial rank, transposed)
CONV_OPS = {"conv1d": (1, False), "conv2d": (2, False), "conv3d": (3, False),
            "conv_transpose1d": (1, True), "conv_transpose2d": (2, True),
            "conv_transpose3d": (3, True)}

# the functional names of the convolutions the spec does not cover, with what they are
OTHER_FUNCTIONS = {
    "conv_tbc": "conv_tbc is not supported",
    "convolution": "torch.convolution is not supported: write F.conv1d/2d/3d or "
                   "F.conv_transpose1d/2d/3d",
}
FUNCTIONS = set(CONV_OPS) | set(OTHER_FUNCTIONS)

# module classes, most derived first (ConvTranspose2d is no Conv2d, but keep the order explicit)
_MODULES = [(nn.ConvTranspose1d, "conv_transpose1d"), (nn.ConvTranspose2d, "conv_transpose2d"),
            (nn.ConvTranspose3d, "conv_transpose3d"), (nn.Conv1d, "conv1d"),
            (nn.Conv2d, "conv2d"), (nn.Conv3d, "conv3d")]

_AXES = {1: ("length",), 2: ("height", "width"), 3: ("depth", "height", "width")}
_X_FORM = {1: "[N, C, L]", 2: "[N, C, H, W]", 3: "[N, C, D, H, W]"}


def is_conv_module(mod):
    return isinstance(mod, nn.modules.conv._ConvNd)


def _axes(v, what, op, rank):
    """PyTorch's int-or-tuple attribute as a list of `rank` ints."""
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            v = tuple(v) * rank
        if len(v) != rank:
            raise Unsupported(f"{op} {what} {list(v)!r} is not an int or {rank} of them")
        out = list(v)
    else:
        out = [v] * rank
    if not all(isinstance(e, int) and not isinstance(e, bool) for e in out):
        raise Unsupported(f"{op} {what} {v!r} is not an int or a tuple of ints")
    return out


def _padding(padding, dilation, kernel, stride, op, rank):
    """The spec's symmetric padding per axis for PyTorch's (an int, a tuple, 'valid', 'same')."""
    if isinstance(padding, str):
        if padding == "valid":
            return [0] * rank
        if padding != "same":
            raise Unsupported(f"{op} padding={padding!r} is not supported "
                              "(an int, a tuple, 'valid' or 'same')")
        if stride != [1] * rank:  # PyTorch refuses it too; here for a direct call on other shapes
            raise Unsupported(f"{op} padding='same' with a stride other than 1 is not supported")
        out = []
        for axis, d, k in zip(_AXES[rank], dilation, kernel):
            total = d * (k - 1)
            if total % 2:
                raise Unsupported(
                    f"{op} padding='same' is asymmetric along the {axis} here: dilation * "
                    f"(kernel - 1) = {total} is odd, and PyTorch pads {total // 2} before and "
                    f"{total - total // 2} after; the spec's {op} pads both sides alike, so "
                    "this is not supported (an odd kernel size or an even dilation is)")
            out.append(total // 2)
        return out
    out = _axes(padding, "padding", op, rank)
    if min(out) < 0:
        raise Unsupported(f"{op} padding {out} is negative")
    return out


def conv(cv, node, op, x, w, b, stride, padding, dilation, groups, shape, dtype,
         output_padding=0):
    """Emits conv op `op` (a CONV_OPS key) of x, w[, b] with PyTorch's arguments (normalized and
    checked)."""
    rank, transposed = CONV_OPS[op]
    if len(x.shape) != rank + 2:
        what = (f"an unbatched {_X_FORM[rank].replace('N, ', '')} input"
                if len(x.shape) == rank + 1 else f"an input of rank {len(x.shape)}")
        raise Unsupported(f"{op} of {what} is not supported (the spec's {op} takes "
                          f"{_X_FORM[rank]})")
    if len(w.shape) != rank + 2:
        raise Unsupported(f"{op} weight of rank {len(w.shape)} is not supported (rank {rank + 2})")
    if b is not None and len(b.shape) != 1:
        raise Unsupported(f"{op} bias of shape {list(b.shape)} is not supported ([K])")
    if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
        raise Unsupported(f"{op} groups {groups!r} is not a positive int")
    stride, dilation = _axes(stride, "stride", op, rank), _axes(dilation, "dilation", op, rank)
    if min(stride) < 1 or min(dilation) < 1:
        raise Unsupported(f"{op} stride {stride} / dilation {dilation} must be positive")
    if transposed and isinstance(padding, str):
        raise Unsupported(f"{op} padding={padding!r} is not supported (PyTorch's transposed "
                          "convolutions take integer padding)")
    padding = _padding(padding, dilation, list(w.shape[2:]), stride, op, rank)
    attrs = {"stride": stride, "padding": padding}
    if transposed:
        attrs["output_padding"] = _axes(output_padding, "output_padding", op, rank)
    elif output_padding not in (0, None):
        raise Unsupported(f"{op} takes no output_padding")
    attrs.update(dilation=dilation, groups=int(groups))
    ins = [x, w] + ([b] if b is not None else [])
    return cv.emit(op, ins, node, shape, dtype, **attrs)


def conv_module(cv, node, mod, x, shape, dtype):
    """nn.Conv1d/2d/3d and nn.ConvTranspose1d/2d/3d -> the conv op with the module's weight and
    bias as params."""
    cls = type(mod).__name__
    op = next((name for c, name in _MODULES if type(mod) is c), None)
    if op is None:
        raise Unsupported(f"nn.{cls} (module {node.target}) is not supported")
    if mod.padding_mode != "zeros":
        raise Unsupported(f"nn.{cls} with padding_mode={mod.padding_mode!r} (module "
                          f"{node.target}) is not supported: the spec's {op} pads with zeros")
    if len(node.args) != 1 or node.kwargs:
        raise Unsupported(f"nn.{cls} (module {node.target}) called with more than its input "
                          "(an output_size) is not supported")
    p = node.target
    w = cv.param(p + ".weight", mod.weight)
    b = cv.param(p + ".bias", mod.bias) if mod.bias is not None else None
    return conv(cv, node, op, x, w, b, mod.stride, mod.padding, mod.dilation, mod.groups,
                shape, dtype, getattr(mod, "output_padding", 0) if CONV_OPS[op][1] else 0)


def conv_function(cv, node, name, args, kw, shape, dtype):
    """F.convNd / torch.convNd(input, weight, bias, stride, padding, dilation, groups) and
    F.conv_transposeNd(input, weight, bias, stride, padding, output_padding, groups, dilation);
    the other functional convolutions are refused by name."""
    if name in OTHER_FUNCTIONS:
        raise Unsupported(OTHER_FUNCTIONS[name] + f" (node {node.name})")

    def get(i, key, default=None):
        return args[i] if len(args) > i else kw.get(key, default)
    x = cv.tensor(get(0, "input"), f"the {name} input")
    w = cv.tensor(get(1, "weight"), f"the {name} weight")
    b = get(2, "bias")
    b = cv.tensor(b, f"the {name} bias") if b is not None else None
    if CONV_OPS[name][1]:
        return conv(cv, node, name, x, w, b, get(3, "stride", 1), get(4, "padding", 0),
                    get(7, "dilation", 1), get(6, "groups", 1), shape, dtype,
                    get(5, "output_padding", 0))
    return conv(cv, node, name, x, w, b, get(3, "stride", 1), get(4, "padding", 0),
                get(5, "dilation", 1), get(6, "groups", 1), shape, dtype)

