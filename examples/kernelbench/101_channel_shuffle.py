import torch
import torch.nn as nn


class Model(nn.Module):
    """ShuffleNet's channel shuffle between two grouped 1x1 convs: view to [b, groups, c/groups,
    h, w], transpose the two group dims, view back to [b, c, h, w]."""

    def __init__(self, channels, groups):
        super().__init__()
        self.groups = groups
        self.conv1 = nn.Conv2d(channels, channels, 1, groups=groups)
        self.conv2 = nn.Conv2d(channels, channels, 1, groups=groups)

    def forward(self, x):
        y = torch.relu(self.conv1(x))
        b, c, h, w = y.size()
        y = y.view(b, self.groups, c // self.groups, h, w)
        y = torch.transpose(y, 1, 2).contiguous()
        y = y.view(b, c, h, w)
        return self.conv2(y)


batch_size = 2
channels = 12
groups = 3
height = 7
width = 9


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, groups]
