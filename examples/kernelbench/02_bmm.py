import torch
import torch.nn as nn


class Model(nn.Module):
    """Batched matrix multiplication: C[b] = A[b] @ B[b]."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.bmm(A, B)


batch_size = 64
m = 128
k = 256
n = 192


def get_inputs():
    return [torch.randn(batch_size, m, k), torch.randn(batch_size, k, n)]


def get_init_inputs():
    return []
