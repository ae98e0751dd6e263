import torch
import torch.nn as nn


class Model(nn.Module):
    """fp16 torch.matmul with N = 1001 (B and C rows of 2002 bytes)"""

    def __init__(self):
        super().__init__()
        pass

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(256, 512, dtype=torch.float16), torch.randn(512, 1001, dtype=torch.float16)]


def get_init_inputs():
    return []
