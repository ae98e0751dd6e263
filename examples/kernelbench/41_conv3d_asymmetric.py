import torch
import torch.nn as nn


class Model(nn.Module):
    """A 3-D convolution with an asymmetric kernel, per-axis stride and padding, no bias."""
    def __init__(self, in_channels: int, out_channels: int):
        super(Model, self).__init__()
        self.conv3d = nn.Conv3d(in_channels, out_channels, (3, 5, 3), stride=(1, 2, 1),
                                padding=(1, 2, 0), bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv3d(x)


batch_size = 4
in_channels = 8
out_channels = 32
depth = 16
height = 32
width = 24


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels]
