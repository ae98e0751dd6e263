import torch
import torch.nn as nn


class Model(nn.Module):
    """Pieces joined and cut: torch.cat of two tensors, torch.stack, chunk and split (slices)."""

    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        joined = torch.cat([x, torch.relu(y)], dim=1)
        stacked = torch.stack([x, y * 0.5], dim=0)
        left, right = torch.chunk(x, 2, dim=-1)
        first, rest = torch.split(y, [3, y.shape[1] - 3], dim=1)
        return joined, stacked, left * right, first.sum(dim=1), rest


batch_size = 8
features = 24


def get_inputs():
    return [torch.randn(batch_size, features), torch.randn(batch_size, features)]


def get_init_inputs():
    return []
