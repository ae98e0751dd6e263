import torch
import torch.nn as nn


class Model(nn.Module):
    """A grouped transposed 2-D convolution with an asymmetric kernel, per-axis stride, padding
    and output_padding and a bias, followed by a scale and a ReLU (a Level-2 style chain)."""
    def __init__(self, in_channels: int, out_channels: int, groups: int, scale: float):
        super(Model, self).__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, (3, 5),
                                                 stride=(2, 1), padding=(1, 2),
                                                 output_padding=(1, 0), groups=groups)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv_transpose(x) * self.scale)


batch_size = 8
in_channels = 32
out_channels = 64
groups = 4
height = 32
width = 48
scale = 0.5


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, groups, scale]
