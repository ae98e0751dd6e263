import torch
import torch.nn as nn


class Model(nn.Module):
    """A transposed 1-D convolution with stride, padding, output_padding and dilation."""
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int,
                 padding: int, output_padding: int, dilation: int):
        super(Model, self).__init__()
        self.conv1d_transpose = nn.ConvTranspose1d(in_channels, out_channels, kernel_size,
                                                   stride=stride, padding=padding,
                                                   output_padding=output_padding,
                                                   dilation=dilation, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv1d_transpose(x)


batch_size = 16
in_channels = 32
out_channels = 16
kernel_size = 3
length = 1024
stride = 2
padding = 1
output_padding = 1
dilation = 2


def get_inputs():
    x = torch.randn(batch_size, in_channels, length)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, dilation]
