import torch
import torch.nn as nn


class Model(nn.Module):
    """nn.Linear 999 -> 1001 on 1000 rows (f32: rows of 999 floats, 4-byte aligned)"""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(999, 1001)

    def forward(self, x):
        return self.fc(x)


def get_inputs():
    return [torch.randn(1000, 999)]


def get_init_inputs():
    return []
