import torch
import torch.nn as nn


class Model(nn.Module):
    """nn.MultiheadAttention (batch_first=False: [L, N, E]) with a float attn_mask [L, S] input
    added to the scores, cross attention (key and value from another tensor) and the default
    need_weights=True: the weights are returned by the module but never read."""

    def __init__(self, dim, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads)

    def forward(self, q, kv, bias):
        y = self.attn(q, kv, kv, attn_mask=bias)[0]
        return y * 0.5


tgt = 12
src = 20
batch = 2
dim = 32
heads = 2


def get_inputs():
    return [torch.randn(tgt, batch, dim), torch.randn(src, batch, dim), torch.randn(tgt, src)]


def get_init_inputs():
    return [dim, heads]
