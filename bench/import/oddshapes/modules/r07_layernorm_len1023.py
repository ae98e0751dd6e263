import torch
import torch.nn as nn


class Model(nn.Module):
    """layer_norm over a trailing dim of 1023"""

    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(1023)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(33, 1023)]


def get_init_inputs():
    return []
