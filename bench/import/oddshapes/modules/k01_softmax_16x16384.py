import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 1 softmax: batch 16, dim 16384"""

    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(16, 16384)]


def get_init_inputs():
    return []
