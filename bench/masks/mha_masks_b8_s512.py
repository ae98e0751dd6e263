import torch
import torch.nn as nn


class Model(nn.Module):
    """Bench size (bench/masks): nn.MultiheadAttention, batch_first, a bool attn_mask [L, S] and
    a bool key_padding_mask [N, S] from get_inputs (True: not attended)."""

    def __init__(self, dim, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)

    def forward(self, x, attn_mask, pad):
        return self.attn(x, x, x, attn_mask=attn_mask, key_padding_mask=pad, need_weights=False)[0]


batch = 8
seq = 512
dim = 512
heads = 8


def get_inputs():
    attn_mask = torch.rand(seq, seq) > 0.8
    attn_mask.fill_diagonal_(False)
    pad = torch.zeros(batch, seq, dtype=torch.bool)
    pad[:, seq - 64:] = True
    return [torch.randn(batch, seq, dim), attn_mask, pad]


def get_init_inputs():
    return [dim, heads]
