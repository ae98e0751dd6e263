import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Causal scaled dot-product attention: F.scaled_dot_product_attention(is_causal=True)."""

    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


batch = 2
heads = 2
seq = 64
head_dim = 32


def get_inputs():
    return [torch.randn(batch, heads, seq, head_dim) for _ in range(3)]


def get_init_inputs():
    return []
