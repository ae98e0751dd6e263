import torch
import torch.nn as nn


class Model(nn.Module):
    """bf16 torch.matmul with K = 1004 and N = 1020 (rows 8-byte aligned, not 16: no TMA)"""

    def __init__(self):
        super().__init__()
        pass

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(512, 1004, dtype=torch.bfloat16), torch.randn(1004, 1020, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
