import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Shape-dependent code, resolved at the file's sizes: a grouped conv, a channel shuffle
    written with the input's sizes, a dense concatenation, a branch on the input's width (pool
    only when it is even), and one Linear applied twice (shared weights)."""

    def __init__(self, channels, groups, features):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, groups=groups)
        self.groups = groups
        self.proj = nn.Linear(features, features)

    def forward(self, x):
        b, c, h, w = x.size()
        y = self.conv(x)
        y = y.view(b, self.groups, c // self.groups, h, w).transpose(1, 2).contiguous()
        y = y.view(b, c, h, w)
        y = torch.cat([x, y], dim=1)
        if w % 2 == 0:
            y = F.avg_pool2d(y, 2)
        z = y.flatten(2)
        return self.proj(torch.relu(self.proj(z)))


batch_size = 4
channels = 8
groups = 2
height = 16
width = 16
features = 64


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, groups, features]
