import torch
import torch.nn as nn


class Model(nn.Module):
    """nn.MultiheadAttention (batch_first) with a bool attn_mask [L, S] and a bool
    key_padding_mask [N, S], both inputs of the model (True: not attended); only the output is
    read (need_weights=False)."""

    def __init__(self, dim, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)

    def forward(self, x, attn_mask, pad):
        y, _ = self.attn(x, x, x, attn_mask=attn_mask, key_padding_mask=pad, need_weights=False)
        return y


batch = 2
seq = 16
dim = 32
heads = 4


def get_inputs():
    attn_mask = torch.rand(seq, seq) > 0.7
    attn_mask.fill_diagonal_(False)  # every query attends to itself: no row all -inf
    pad = torch.zeros(batch, seq, dtype=torch.bool)
    pad[:, seq - 3:] = True  # the last keys are padding (the diagonal keeps those rows)
    return [torch.randn(batch, seq, dim), attn_mask, pad]


def get_init_inputs():
    return [dim, heads]
