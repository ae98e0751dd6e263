import torch
import torch.nn as nn


class Model(nn.Module):
    """MaxPool1d with padding, dilation and ceil_mode: one max_pool op over [N, C, L]."""

    def __init__(self, kernel_size, stride, padding, dilation):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size, stride=stride, padding=padding, dilation=dilation,
                                 ceil_mode=True)

    def forward(self, x):
        return self.pool(x)


batch_size = 8
features = 32
sequence_length = 4099
kernel_size = 4
stride = 3
padding = 2
dilation = 2


def get_inputs():
    return [torch.randn(batch_size, features, sequence_length)]


def get_init_inputs():
    return [kernel_size, stride, padding, dilation]
