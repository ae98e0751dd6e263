import torch
import torch.nn as nn


class Model(nn.Module):
    """Triangular masks of matrix products (KernelBench level 1, problems 14-15 use triu and tril
    this way): the upper triangle of A @ B, and the part of B @ A below its diagonal (tril with a
    diagonal offset); A is upper, B lower triangular."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.triu(torch.matmul(A, B)), torch.tril(torch.matmul(B, A), diagonal=-1)


N = 512


def get_inputs():
    return [torch.triu(torch.rand(N, N)), torch.tril(torch.rand(N, N))]


def get_init_inputs():
    return []
