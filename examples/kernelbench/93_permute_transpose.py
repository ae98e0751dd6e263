import torch
import torch.nn as nn


class Model(nn.Module):
    """Axes moved: x.permute(0, 2, 1), a transpose of the first two dims and x.T read by an
    element-wise op (not a matmul operand): permute ops."""

    def __init__(self):
        super().__init__()

    def forward(self, x, w):
        a = torch.tanh(x.permute(0, 2, 1))
        b = x.transpose(0, 1) * 2.0
        return a, b, w.T + 1.0


batch_size = 4
rows = 12
cols = 20


def get_inputs():
    return [torch.randn(batch_size, rows, cols), torch.randn(rows, cols)]


def get_init_inputs():
    return []
