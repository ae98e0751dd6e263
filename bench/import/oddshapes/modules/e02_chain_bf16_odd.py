import torch
import torch.nn as nn


class Model(nn.Module):
    """bf16 element-wise chain on 3x1001"""

    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return torch.nn.functional.gelu(x) + 1.0


def get_inputs():
    return [torch.randn(3, 1001, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
