import torch
import torch.nn as nn


class Model(nn.Module):
    """A per-row scale broadcast by expand and expand_as, and reshape of a bias to [1, C, 1]."""

    def __init__(self, channels):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(channels))

    def forward(self, x, s):
        scale = s.view(-1, 1, 1).expand(-1, x.size(1), x.size(2))
        shift = self.bias.reshape(1, -1, 1).expand_as(x)
        return x * scale + shift


batch_size = 4
channels = 6
length = 32


def get_inputs():
    return [torch.randn(batch_size, channels, length), torch.randn(batch_size)]


def get_init_inputs():
    return [channels]
