"""Convolutions -> the spec's conv2d op (used by fx_import.Converter and fx_ops.convert).

nn.Conv2d, F.conv2d and torch.conv2d become one `conv2d` op: x [N, C, H, W], the weight
[K, C/groups, R, S] and the optional bias [K] (a module's weight and bias become params, as
nn.Linear's do), with stride, padding, dilation and groups as attributes (pairs). padding='valid'
is 0; padding='same' is PyTorch's d*(k-1) split in two, which the spec writes only where it is
even (symmetric); PyTorch pads an odd amount one more after than before, which the spec's symmetric
padding cannot say, so that is refused. Grouped convolutions import (the spec says groups; later
stages refuse what they cannot run). padding_mode other than 'zeros' (a reflected, replicated or
circular border) is refused by name, as are Conv1d (a [N, C, L] input: the spec has no reshape
to view it as [N, C, 1, L]), Conv3d and the transposed convolutions."""
import torch.nn as nn

from kforge_py.fx_types import Unsupported

# the functional names of the convolutions conv2d does not cover, with what they are
OTHER_FUNCTIONS = {
    "conv1d": "conv1d (a 1-d convolution over [N, C, L]) is not supported: the spec's conv2d "
              "takes [N, C, H, W] and has no reshape to view the input as [N, C, 1, L]",
    "conv3d": "conv3d (a 3-d convolution) is not supported: the spec has conv2d only",
    "conv_transpose1d": "conv_transpose1d (a transposed convolution) is not supported",
    "conv_transpose2d": "conv_transpose2d (a transposed convolution) is not supported",
    "conv_transpose3d": "conv_transpose3d (a transposed convolution) is not supported",
    "conv_tbc": "conv_tbc is not supported",
    "convolution": "torch.convolution is not supported: write F.conv2d",
}
FUNCTIONS = {"conv2d"} | set(OTHER_FUNCTIONS)

_MODULES = {nn.Conv1d: "conv1d", nn.Conv3d: "conv3d", nn.ConvTranspose1d: "conv_transpose1d",
            nn.ConvTranspose2d: "conv_transpose2d", nn.ConvTranspose3d: "conv_transpose3d"}


def is_conv_module(mod):
    return isinstance(mod, nn.modules.conv._ConvNd)


def _pair(v, what):
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            v = (v[0], v[0])
        if len(v) != 2:
            raise Unsupported(f"conv2d {what} {list(v)!r} is not an int or a pair")
        out = list(v)
    else:
        out = [v, v]
    if not all(isinstance(e, int) and not isinstance(e, bool) for e in out):
        raise Unsupported(f"conv2d {what} {v!r} is not an int or a pair of ints")
    return out


def _padding(padding, dilation, kernel, stride):
    """The spec's symmetric [ph, pw] for PyTorch's padding (an int, a pair, 'valid', 'same')."""
    if isinstance(padding, str):
        if padding == "valid":
            return [0, 0]
        if padding != "same":
            raise Unsupported(f"conv2d padding={padding!r} is not supported "
                              "(an int, a pair, 'valid' or 'same')")
        if stride != [1, 1]:  # PyTorch refuses it too; here for a direct call on other shapes
            raise Unsupported("conv2d padding='same' with a stride other than 1 is not supported")
        out = []
        for axis, d, k in zip(("height", "width"), dilation, kernel):
            total = d * (k - 1)
            if total % 2:
                raise Unsupported(
                    f"conv2d padding='same' is asymmetric along the {axis} here: dilation * "
                    f"(kernel - 1) = {total} is odd, and PyTorch pads {total // 2} before and "
                    f"{total - total // 2} after; the spec's conv2d pads both sides alike, so "
                    "this is not supported (an odd kernel size or an even dilation is)")
            out.append(total // 2)
        return out
    out = _pair(padding, "padding")
    if min(out) < 0:
        raise Unsupported(f"conv2d padding {out} is negative")
    return out


def conv2d(conv, node, x, w, b, stride, padding, dilation, groups, shape, dtype):
    """Emits the conv2d op of x, w[, b] with PyTorch's arguments (normalized and checked)."""
    if len(x.shape) != 4:
        what = ("an unbatched [C, H, W] input" if len(x.shape) == 3
                else f"an input of rank {len(x.shape)}")
        raise Unsupported(f"conv2d of {what} is not supported (the spec's conv2d takes "
                          "[N, C, H, W])")
    if len(w.shape) != 4:
        raise Unsupported(f"conv2d weight of rank {len(w.shape)} is not supported "
                          "([K, C/groups, R, S])")
    if b is not None and len(b.shape) != 1:
        raise Unsupported(f"conv2d bias of shape {list(b.shape)} is not supported ([K])")
    if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
        raise Unsupported(f"conv2d groups {groups!r} is not a positive int")
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    if min(stride) < 1 or min(dilation) < 1:
        raise Unsupported(f"conv2d stride {stride} / dilation {dilation} must be positive")
    padding = _padding(padding, dilation, list(w.shape[2:]), stride)
    ins = [x, w] + ([b] if b is not None else [])
    return conv.emit("conv2d", ins, node, shape, dtype, stride=stride, padding=padding,
                     dilation=dilation, groups=int(groups))


def conv_module(conv, node, mod, x, shape, dtype):
    """nn.Conv2d -> conv2d with its weight and bias as params; the other convolution modules are
    refused by name."""
    cls = type(mod).__name__
    if not isinstance(mod, nn.Conv2d) or isinstance(mod, nn.ConvTranspose2d):
        what = next((f for c, f in _MODULES.items() if isinstance(mod, c)), None)
        if what is not None:
            raise Unsupported(f"nn.{cls} (module {node.target}): " + OTHER_FUNCTIONS[what])
        raise Unsupported(f"nn.{cls} (module {node.target}) is not supported")
    if mod.padding_mode != "zeros":
        raise Unsupported(f"nn.Conv2d with padding_mode={mod.padding_mode!r} (module "
                          f"{node.target}) is not supported: the spec's conv2d pads with zeros")
    if len(node.args) != 1 or node.kwargs:
        raise Unsupported(f"nn.Conv2d (module {node.target}) called with more than its input "
                          "is not supported")
    p = node.target
    w = conv.param(p + ".weight", mod.weight)
    b = conv.param(p + ".bias", mod.bias) if mod.bias is not None else None
    return conv2d(conv, node, x, w, b, mod.stride, mod.padding, mod.dilation, mod.groups,
                  shape, dtype)


def conv_function(conv, node, name, args, kw, shape, dtype):
    """F.conv2d / torch.conv2d(input, weight, bias, stride, padding, dilation, groups); the other
    functional convolutions are refused by name."""
    if name in OTHER_FUNCTIONS:
        raise Unsupported(OTHER_FUNCTIONS[name] + f" (node {node.name})")

    def get(i, key, default=None):
        return args[i] if len(args) > i else kw.get(key, default)
    x = conv.tensor(get(0, "input"), "the conv2d input")
    w = conv.tensor(get(1, "weight"), "the conv2d weight")
    b = get(2, "bias")
    b = conv.tensor(b, "the conv2d bias") if b is not None else None
    return conv2d(conv, node, x, w, b, get(3, "stride", 1), get(4, "padding", 0),
                  get(5, "dilation", 1), get(6, "groups", 1), shape, dtype)
