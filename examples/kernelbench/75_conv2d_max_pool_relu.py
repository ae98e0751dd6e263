import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d, then MaxPool2d(2), then ReLU (a KernelBench level-2 pattern): conv2d -> max_pool ->
    relu, the pool reading the convolution's derived output dims."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        return torch.relu(self.pool(self.conv(x)))


batch_size = 16
in_channels = 8
out_channels = 32
height = width = 66
kernel_size = 3


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
