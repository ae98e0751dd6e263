import torch
import torch.nn as nn


class Model(nn.Module):
    """fp16 A @ B.T with K = 1024 (A and B rows 16-byte aligned) and N = 1001: only the output's
    rows (2002 bytes) are misaligned."""

    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b.T)


def get_inputs():
    return [torch.randn(256, 1024, dtype=torch.float16), torch.randn(1001, 1024, dtype=torch.float16)]


def get_init_inputs():
    return []
