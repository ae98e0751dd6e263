import torch
import torch.nn as nn


class Model(nn.Module):
    """bf16 torch.matmul with K = 1001 (rows of 2002 bytes: neither 16- nor 4-byte aligned)"""

    def __init__(self):
        super().__init__()
        pass

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(512, 1001, dtype=torch.bfloat16), torch.randn(1001, 1024, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
