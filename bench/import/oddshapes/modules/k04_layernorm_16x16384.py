import torch
import torch.nn as nn


class Model(nn.Module):
    """layer_norm over 16384 on batch 16"""

    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(16384)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(16, 16384)]


def get_init_inputs():
    return []
