import torch
import torch.nn as nn


class Model(nn.Module):
    """MaxPool2d, 3x3 windows at stride 2 with padding 1 (ResNet's stem pool)."""

    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        return self.pool(x)


batch_size = 16
channels = 64
height = 224
width = 160


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
