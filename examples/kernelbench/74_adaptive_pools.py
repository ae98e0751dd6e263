import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Adaptive pools: AdaptiveAvgPool2d to (7, None) (None keeps the width), AdaptiveMaxPool2d to
    3x5 (windows that overlap) and global average pooling (adaptive to 1)."""

    def __init__(self):
        super().__init__()
        self.avg = nn.AdaptiveAvgPool2d((7, None))  # None: the input width (38 here)
        self.max = nn.AdaptiveMaxPool2d((3, 5))

    def forward(self, x):
        return self.avg(x), self.max(x), F.adaptive_avg_pool2d(x, 1)


batch_size = 8
channels = 64
height = 50
width = 38


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
