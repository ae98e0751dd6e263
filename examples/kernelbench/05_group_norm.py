import torch
import torch.nn as nn


class Model(nn.Module):
    """Group normalization of an NCHW activation."""

    def __init__(self, num_features, num_groups):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)

    def forward(self, x):
        return self.gn(x)


batch_size = 16
features = 64
num_groups = 8
dim1 = 128
dim2 = 96


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [features, num_groups]
