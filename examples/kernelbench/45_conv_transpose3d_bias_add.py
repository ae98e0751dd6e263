import torch
import torch.nn as nn


class Model(nn.Module):
    """A transposed 3-D convolution (stride 2, padding 1, output_padding 1) plus a per-channel
    bias parameter, then a sigmoid."""
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, bias_shape):
        super(Model, self).__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size,
                                                 stride=2, padding=1, output_padding=1)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.conv_transpose(x) + self.bias)


batch_size = 4
in_channels = 16
out_channels = 8
kernel_size = 3
depth = 8
height = 16
width = 16
bias_shape = (out_channels, 1, 1, 1)


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape]
