import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Four stride-2 convolutions, then per channel the spatial max minus the spatial mean,
    through a ReLU. At the file's 128x128 the last map is 8x8 and the output depends on the
    inputs; at 16x16 (a size a numeric check may reduce to) the map collapses to 1x1, where max
    and mean coincide and the output is 0 everywhere: degenerate only at the reduced sizes."""

    def __init__(self, in_channels, channels):
        super().__init__()
        convs, c = [], in_channels
        for _ in range(4):
            convs.append(nn.Conv2d(c, channels, kernel_size=3, stride=2, padding=1))
            c = channels
        self.convs = nn.ModuleList(convs)

    def forward(self, x):
        for conv in self.convs:
            x = torch.tanh(conv(x))
        peak = torch.amax(x, dim=(2, 3))
        return F.relu(peak - x.mean(dim=(2, 3)))


batch_size = 512
in_channels = 3
channels = 8
height = 128
width = 128


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, channels]
