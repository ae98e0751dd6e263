"""The draw of a param at the scale PyTorch's default init gives it (docs/problem-spec.md:
an input's "distribution", "fan_in" and "scale").

kforge draws a param's values itself (problem/inputs.h), N(0, 1) unless the spec says otherwise.
A KernelBench model is built with PyTorch's default init, under which nn.Linear and every
nn.Conv*d / nn.ConvTranspose*d hold weights and biases uniform in +-1/sqrt(fan_in) (fan_in from
torch.nn.init._calculate_fan_in_and_fan_out on the weight: in_features, or weight.size(1) times
the kernel's extent, out_channels / groups for a transposed conv's [C_in, K / groups, *]
layout), nn.LSTM / nn.GRU and their cells in +-1/sqrt(hidden_size), and MultiheadAttention's
projection weights xavier-uniform, +-sqrt(6 / (fan_in + fan_out)). Drawn at N(0, 1) instead, a
deep network's activations grow ~sqrt(fan_in) per layer and overflow fp32 (a GoogleNet's).

So such a param is written "distribution": "uniform_pm1" (U[-1, 1)) with "fan_in": the product
of the weight's own spec shape entries after the first (what torch multiplies; "C*3*3", dims by
name so that a smaller binding of the spec, a correctness shape, draws at that binding's fan-in)
or, where those do not multiply to torch's fan_in at the import's sizes (a weight fed in another
shape), the number itself; and "scale" where the bound is not 1/sqrt(fan_in) alone (xavier).
Norm affine params, biases PyTorch zeroes (attention's in_proj_bias) and anything else keep the
spec's default draw, N(0, 1): a draw of ones and zeros would hide a kernel that drops the affine.
A module subclass with its own reset_parameters, or a model re-initialising a weight in
__init__, is not seen: the draw follows the module's class."""
import math

import torch
import torch.nn as nn

# classes whose reset_parameters draws every weight and bias in +-1/sqrt(fan_in of the weight)
_FAN_IN = (nn.Linear, nn.modules.conv._ConvNd)
_RNN = (nn.LSTM, nn.GRU, nn.LSTMCell, nn.GRUCell)


def _own_init(mod, base):
    """Whether `mod` initialises as its torch base class does (no override of reset_parameters)."""
    return type(mod).reset_parameters is base.reset_parameters


def rule(root, path):
    """(fan_in weight path, fan_in, scale) for the param at attribute `path` of module `root`:
    values uniform in +-scale/sqrt(fan_in), fan_in that of the weight at the first path (for
    the expression the spec writes); None where the param's init is not one of those."""
    owner, _, attr = path.rpartition(".")
    try:
        mod = root.get_submodule(owner) if owner else root
    except AttributeError:
        return None
    if isinstance(mod, _FAN_IN) and attr in ("weight", "bias"):
        base = nn.Linear if isinstance(mod, nn.Linear) else nn.modules.conv._ConvNd
        if not _own_init(mod, base) or not isinstance(mod.weight, torch.Tensor):
            return None
        fan_in, _ = nn.init._calculate_fan_in_and_fan_out(mod.weight)
        return (f"{owner}.weight" if owner else "weight", fan_in, 1.0) if fan_in > 0 else None
    if isinstance(mod, _RNN) and type(mod) in _RNN and (attr.startswith("weight_") or
                                                         attr.startswith("bias_")):
        # every weight and bias in +-1/sqrt(hidden_size): the fan-in of a hidden-to-hidden
        # weight [G * H, H], whose second axis the spec names H
        hh = next((n for n, _ in mod.named_parameters() if n.startswith("weight_hh")), None)
        if hh is None:
            return None
        return (f"{owner}.{hh}" if owner else hh, mod.hidden_size, 1.0)
    if type(mod) is nn.MultiheadAttention and attr.endswith("proj_weight"):
        w = getattr(mod, attr)
        fan_in, fan_out = nn.init._calculate_fan_in_and_fan_out(w)
        if fan_in < 1:
            return None
        return path, fan_in, math.sqrt(6.0 * fan_in / (fan_in + fan_out))  # xavier_uniform_
    return None


def _extent(entry, dims):
    """The value of a spec shape entry: an integer, a dim name or a product "4*H"."""
    if isinstance(entry, int):
        return entry
    value = 1
    for f in str(entry).split("*"):
        value *= int(f) if f.isdigit() else dims[f]
    return value


def fan_in_entry(shape, dims, fan_in):
    """What the spec writes as "fan_in" of a weight of spec shape `shape`: the product of its
    entries after the first other than 1 ("C*3*3"; one entry as is) where that is `fan_in` at `dims`, else
    the number `fan_in`."""
    tail = [e for e in shape[1:] if e != 1]  # a 1x1 kernel's extents multiply nothing
    try:
        product = math.prod(_extent(e, dims) for e in tail)
    except (KeyError, ValueError):
        return int(fan_in)
    if not tail or product != fan_in or all(isinstance(e, int) for e in tail):
        return int(fan_in)
    return tail[0] if len(tail) == 1 else "*".join(str(e) for e in tail)


def declare_init_draws(root, params, inputs, dims):
    """Sets "distribution", "fan_in" and "scale" on each spec input entry (`inputs`: name ->
    entry, dims named) of a param (`params`: spec name -> (attribute path, shape)) whose module
    initialises it uniformly at a fan-in scale (rule()); the others are left as they are."""
    name_of = {path: n for n, (path, _) in params.items()}
    for n, (path, _) in params.items():
        r = rule(root, path)
        if r is None or n not in inputs:
            continue
        weight_path, fan_in, scale = r
        w = name_of.get(weight_path)
        shape = inputs[w]["shape"] if w in inputs else []
        entry = inputs[n]
        entry["distribution"] = "uniform_pm1"
        entry["fan_in"] = fan_in_entry(shape, dims, fan_in)
        if scale != 1.0:
            entry["scale"] = scale
