import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Functional convolutions: F.conv3d with padding='same' and dilation, and
    F.conv_transpose1d over its output's flattened depth-height-width with groups."""
    def __init__(self, in_channels: int, out_channels: int):
        super(Model, self).__init__()
        self.w3 = nn.Parameter(torch.randn(out_channels, in_channels, 3, 3, 3) * 0.1)
        self.wt = nn.Parameter(torch.randn(out_channels, 2, 4) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.conv3d(x, self.w3, padding="same", dilation=(1, 2, 1))
        y = y.flatten(2)
        return F.conv_transpose1d(y, self.wt, stride=3, padding=2, groups=2)


batch_size = 2
in_channels = 4
out_channels = 8
depth = 6
height = 8
width = 10


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels]
