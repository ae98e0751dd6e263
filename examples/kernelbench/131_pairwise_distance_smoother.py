import torch
import torch.nn as nn


class Model(nn.Module):
    """A kernel smoother over a point set: squared distances between every pair of points
    (x[:, :, None] - x[:, None, :], a broadcast of one tensor against itself), a Gaussian weight
    exp(-d / bandwidth) normalized over the second point, and the weighted average of the points.
    As many points as coordinates: the differences [B, N, N, D] have three axes of one extent, of
    which the first two are the pair."""

    def __init__(self, bandwidth):
        super().__init__()
        self.bandwidth = bandwidth

    def forward(self, x):
        d = (x[:, :, None, :] - x[:, None, :, :]).pow(2).sum(dim=-1)
        w = torch.softmax(-d / self.bandwidth, dim=-1)
        return w @ x


batch_size = 4
points = 16
coords = 16
bandwidth = 8.0


def get_inputs():
    return [torch.randn(batch_size, points, coords)]


def get_init_inputs():
    return [bandwidth]
