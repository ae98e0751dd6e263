import torch
import torch.nn as nn


class Model(nn.Module):
    """A 1-D convolution with stride, padding and dilation, with a bias."""
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int,
                 padding: int, dilation: int):
        super(Model, self).__init__()
        self.conv1d = nn.Conv1d(in_channels, out_channels, kernel_size, stride=stride,
                                padding=padding, dilation=dilation, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv1d(x)


batch_size = 16
in_channels = 32
out_channels = 64
kernel_size = 5
length = 4096
stride = 2
padding = 4
dilation = 2


def get_inputs():
    x = torch.randn(batch_size, in_channels, length)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation]
