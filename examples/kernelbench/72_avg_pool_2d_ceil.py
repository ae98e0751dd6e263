import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """F.avg_pool2d with ceil_mode and count_include_pad=False, asymmetric kernel and stride:
    the border windows divide by the elements inside the input only."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.avg_pool2d(x, (3, 2), (2, 3), (1, 1), ceil_mode=True, count_include_pad=False)


batch_size = 8
channels = 48
height = 255
width = 190


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
