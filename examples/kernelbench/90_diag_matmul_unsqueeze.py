import torch
import torch.nn as nn


class Model(nn.Module):
    """C = diag(A) @ B written as a broadcast: A.unsqueeze(1) * B (KernelBench level 1, 12).

    The unsqueeze is a view (a reshape to [N, 1]); the product is one element-wise kernel."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return A.unsqueeze(1) * B


N = 2048
M = 1024


def get_inputs():
    return [torch.randn(N), torch.randn(N, M)]


def get_init_inputs():
    return []
