"""The values the fx importer passes between its modules (fx_import, fx_ops, fx_chains,
fx_decomp, fx_forms, fx_conv, fx_losses): the spec tensor an fx node became, the views only one
kind of reader may take (a transposed matmul operand, a flipped scan input, torch.max's pair),
a number made in forward, and the one error, Unsupported. This module imports no other module of
the importer, so each of them can import it at the top."""
import math
from dataclasses import dataclass

import torch

DTYPES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16",
          torch.float64: "f64", torch.int32: "i32", torch.int64: "i64", torch.bool: "bool"}


class Unsupported(Exception):
    """The model uses something the spec cannot express; the message names it."""


@dataclass
class Tensor:
    name: str
    shape: tuple
    dtype: str


@dataclass
class Transposed:  # the last two dims of `tensor` swapped; only a matmul operand may read it
    tensor: Tensor


@dataclass
class Flipped:  # `tensor` reversed along `dims`; only cumsum / cumprod over that dim may read it
    tensor: Tensor
    dims: tuple


@dataclass
class MaxPair:  # (values, indices) of torch.max/min with a dim; only [0] is supported
    values: Tensor
    what: str


class ConstantTensor(float):
    """The number of a 0-d tensor made in forward: a scalar operand everywhere (is_scalar), and
    told apart from a dim where a function takes either (torch.max(x, 1) reduces dim 1,
    torch.max(x, torch.tensor(1)) is the element-wise maximum)."""


def is_scalar(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
