import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 1 sum over dim 1: 16 x 256 x 256"""

    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return torch.sum(x, dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(16, 256, 256)]


def get_init_inputs():
    return []
