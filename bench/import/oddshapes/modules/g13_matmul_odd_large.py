import torch
import torch.nn as nn


class Model(nn.Module):
    """torch.matmul 2000x1999 @ 1999x2001 (f32, enough tiles for the Hopper staged 3xTF32 path)"""

    def __init__(self):
        super().__init__()
        pass

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(2000, 1999), torch.randn(1999, 2001)]


def get_init_inputs():
    return []
