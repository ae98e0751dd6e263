import torch
import torch.nn as nn


class Model(nn.Module):
    """Rank-5 matmuls: states of chunks per head against a per-batch projection that
    broadcasts over chunks and heads ([B,C,H,L,K] @ [B,1,1,K,N]: C, H fold into the rows), and
    a rank-5 batched product with both operands over all batch dims ([B,C,H,L,K] @
    [B,C,H,K,L]) followed by a residual."""

    def __init__(self):
        super().__init__()

    def forward(self, x, proj, y, r):
        folded = torch.matmul(x, proj)              # [B, C, H, L, N]
        batched = torch.matmul(x, y) + r            # [B, C, H, L, L]
        return folded, batched


batch_size = 2
chunks = 3
heads = 4
length = 32
k = 16
n = 24


def get_inputs():
    return [torch.randn(batch_size, chunks, heads, length, k),
            torch.randn(batch_size, 1, 1, k, n),
            torch.randn(batch_size, chunks, heads, k, length),
            torch.randn(batch_size, chunks, heads, length, length)]


def get_init_inputs():
    return []
