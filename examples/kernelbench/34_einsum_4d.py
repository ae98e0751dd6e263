import torch
import torch.nn as nn


class Model(nn.Module):
    """4-D tensor times matrix as torch.einsum (KernelBench level 1, problem 11, smaller).

    C[b, i, j, k] = sum_l A[b, i, j, l] * B[l, k]: one matmul whose batch dims (b, i) broadcast
    over the 2-D B."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.einsum("bijl,lk->bijk", A, B)


b = 8
i = 64
j = 256
l = 256
k = 512


def get_inputs():
    return [torch.randn(b, i, j, l), torch.randn(l, k)]


def get_init_inputs():
    return []
