import torch
import torch.nn as nn


class Model(nn.Module):
    """torch.bmm batch 3, 100x37 @ 37x51 (f32)"""

    def __init__(self):
        super().__init__()
        pass

    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(3, 100, 37), torch.randn(3, 37, 51)]


def get_init_inputs():
    return []
