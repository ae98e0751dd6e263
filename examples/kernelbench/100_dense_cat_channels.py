import torch
import torch.nn as nn


class Model(nn.Module):
    """A dense block's concatenations along channels: two, three and four tensors joined on
    dim 1 (conv outputs beside the block input, as DenseNet writes it), then a 1x1 conv."""

    def __init__(self, channels, growth):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, growth, 3, padding=1)
        self.conv2 = nn.Conv2d(channels + growth, growth, 3, padding=1)
        self.conv3 = nn.Conv2d(channels + 2 * growth, growth, 1)
        self.proj = nn.Conv2d(channels + 3 * growth, channels, 1)

    def forward(self, x):
        a = torch.relu(self.conv1(x))
        b = torch.relu(self.conv2(torch.cat([x, a], 1)))
        c = torch.sigmoid(self.conv3(torch.cat([x, a, b], 1)))
        return self.proj(torch.cat([x, a, b, c], 1))


batch_size = 2
channels = 8
growth = 4
height = 10
width = 12


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, growth]
