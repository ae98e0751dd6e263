import torch
import torch.nn as nn


class Model(nn.Module):
    """Matmuls whose batch dims broadcast: a per-head weight shared by the batch
    ([B,H,M,K] @ [H,K,N]), a shared left matrix against a batch ([M,K] @ [B,K,N]) and an
    outer product of batch dims ([B,1,M,K] @ [1,H,K,N])."""

    def __init__(self, heads, k, n):
        super().__init__()
        self.w = nn.Parameter(torch.randn(heads, k, n) / k ** 0.5)

    def forward(self, x, p, y, u, z):
        per_head = torch.matmul(x, self.w)          # [B, H, M, N]
        shared = torch.matmul(p, y)                 # [B, M, N]
        outer = torch.matmul(u, z)                  # [B, H, M, N]
        return per_head + outer, shared


batch_size = 3
heads = 4
m = 64
k = 32
n = 48


def get_inputs():
    return [torch.randn(batch_size, heads, m, k), torch.randn(m, k),
            torch.randn(batch_size, k, n), torch.randn(batch_size, 1, m, k),
            torch.randn(1, heads, k, n)]


def get_init_inputs():
    return [heads, k, n]
