import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A^T @ B with A stored as [K, M]."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A.T, B)


M = 256
K = 512
N = 128


def get_inputs():
    return [torch.randn(K, M), torch.randn(K, N)]


def get_init_inputs():
    return []
