import torch
import torch.nn as nn


class Model(nn.Module):
    """layer_norm over a trailing dim of 3"""

    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(3)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(1001, 3)]


def get_init_inputs():
    return []
