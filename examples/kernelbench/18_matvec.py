import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A @ B with B a column (KernelBench level 1, problem 4, smaller)."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


M = 2048
K = 65536


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, 1)]


def get_init_inputs():
    return []
