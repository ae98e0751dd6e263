import torch
import torch.nn as nn


class Model(nn.Module):
    """AvgPool3d (padding counted in the divisor, PyTorch's default) and AvgPool3d with a
    divisor_override: two outputs over [N, C, D, H, W]."""

    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.AvgPool3d(kernel_size=kernel_size, stride=stride, padding=padding)
        self.pool_div = nn.AvgPool3d(kernel_size=2, divisor_override=3)

    def forward(self, x):
        return self.pool(x), self.pool_div(x)


batch_size = 4
channels = 16
depth = 20
height = 24
width = 36
kernel_size = 3
stride = 2
padding = 1


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return [kernel_size, stride, padding]
