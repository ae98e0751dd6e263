import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix-scalar multiplication C = A * s, with s a Python number passed to forward()
    (KernelBench level 1 style); the importer bakes s into the spec as a constant."""

    def __init__(self):
        super().__init__()

    def forward(self, A, s):
        return A * s


M = 1024
N = 512


def get_inputs():
    return [torch.randn(M, N), 3.14]


def get_init_inputs():
    return []
