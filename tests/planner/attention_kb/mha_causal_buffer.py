import torch
import torch.nn as nn


class Model(nn.Module):
    """nn.MultiheadAttention (batch_first) under a causal bool attn_mask made in __init__ as a
    buffer (True above the diagonal: not attended) - a constant triangle, so the structured
    causal mask of the fused attention kernel."""

    def __init__(self, dim, heads, seq):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.register_buffer("causal", torch.triu(torch.ones(seq, seq, dtype=torch.bool), 1))

    def forward(self, x):
        return self.attn(x, x, x, attn_mask=self.causal, need_weights=False)[0]


batch = 2
seq = 16
dim = 32
heads = 4


def get_inputs():
    return [torch.randn(batch, seq, dim)]


def get_init_inputs():
    return [dim, heads, seq]
