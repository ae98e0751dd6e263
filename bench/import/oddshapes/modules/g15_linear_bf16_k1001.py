import torch
import torch.nn as nn


class Model(nn.Module):
    """bf16 nn.Linear 1001 -> 513 with bias on 77 rows (x and weight rows of 2002 bytes)"""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(1001, 513, dtype=torch.bfloat16)

    def forward(self, x):
        return torch.nn.functional.gelu(self.fc(x))


def get_inputs():
    return [torch.randn(77, 1001, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
