import torch
import torch.nn as nn


class Model(nn.Module):
    """Triangular masks of a matrix product (KernelBench level 1, problems 14-15 use triu and tril
    this way): the upper triangle of A @ B, and its part below the diagonal (tril with a diagonal
    offset)."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        C = torch.matmul(A, B)
        return torch.triu(C), torch.tril(C, diagonal=-1)


M = 256
K = 384
N = 512


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
