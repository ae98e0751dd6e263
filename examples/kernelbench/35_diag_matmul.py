import torch
import torch.nn as nn


class Model(nn.Module):
    """C = diag(A) @ B with A a vector (KernelBench level 1, problem 12).

    Row n of B scaled by A[n]: a broadcast mul (the N x N diagonal matrix is never made)."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.diag(A) @ B


N = 4096
M = 4096


def get_inputs():
    return [torch.randn(N), torch.randn(N, M)]


def get_init_inputs():
    return []
