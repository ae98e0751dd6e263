import torch
import torch.nn as nn


class Model(nn.Module):
    """A segment sum's decay matrix, as Mamba-2 writes it: pairwise differences of a cumulative
    sum, the strict upper triangle filled with -inf through a mask made in forward
    (~torch.tril(ones)), then exp."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        t = x.size(-1)
        c = torch.cumsum(x, dim=-1)
        d = c[..., :, None] - c[..., None, :]
        mask = torch.tril(torch.ones(t, t, device=x.device, dtype=torch.bool), diagonal=0)
        return torch.exp(d.masked_fill(~mask, -torch.inf))


batch = 4
heads = 3
length = 16


def get_inputs():
    return [torch.randn(batch, heads, length) * 0.1]


def get_init_inputs():
    return []
