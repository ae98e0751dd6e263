import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """A GPT-style causal self-attention layer: one projection to q, k, v, heads split, a
    registered lower-triangular buffer [1, 1, max, max] sliced to the sequence and compared with
    0, softmax, attention dropout of p = 0, heads merged, the output projection."""

    def __init__(self, embed, heads, max_len):
        super().__init__()
        self.qkv = nn.Linear(embed, 3 * embed)
        self.proj = nn.Linear(embed, embed)
        self.drop = nn.Dropout(0.0)
        self.heads = heads
        self.register_buffer("bias", torch.tril(torch.ones(max_len, max_len))
                             .view(1, 1, max_len, max_len))

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        att = self.drop(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.proj(y)


batch = 2
seq = 48
embed = 64
heads = 4
max_len = 64


def get_inputs():
    return [torch.randn(batch, seq, embed)]


def get_init_inputs():
    return [embed, heads, max_len]
