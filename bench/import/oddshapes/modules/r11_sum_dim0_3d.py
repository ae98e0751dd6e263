import torch
import torch.nn as nn


class Model(nn.Module):
    """sum over dim 0 of a 3-D tensor with odd dims"""

    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return torch.sum(x, dim=0)


def get_inputs():
    return [torch.randn(5, 7, 9)]


def get_init_inputs():
    return []
