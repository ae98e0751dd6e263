import torch
import torch.nn as nn


class Model(nn.Module):
    """torch.bmm with batch 1 and odd M, K, N (f32)"""

    def __init__(self):
        super().__init__()
        pass

    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(1, 127, 65), torch.randn(1, 65, 33)]


def get_init_inputs():
    return []
