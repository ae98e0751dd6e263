import torch
import torch.nn as nn


class Model(nn.Module):
    """torch.matmul with N = 1 (a matrix-vector product, f32)"""

    def __init__(self):
        super().__init__()
        pass

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(1000, 999), torch.randn(999, 1)]


def get_init_inputs():
    return []
