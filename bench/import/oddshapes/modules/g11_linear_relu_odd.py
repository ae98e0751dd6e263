import torch
import torch.nn as nn


class Model(nn.Module):
    """nn.Linear 1001 -> 999 then ReLU on 7 rows (f32)"""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(1001, 999)

    def forward(self, x):
        return torch.relu(self.fc(x))


def get_inputs():
    return [torch.randn(7, 1001)]


def get_init_inputs():
    return []
