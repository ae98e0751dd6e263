import torch
import torch.nn as nn


class Model(nn.Module):
    """A transformer MLP's first half: nn.Linear on a [batch, seq, d_model] input, then GELU."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        self.fc = nn.Linear(d_model, d_ff)

    def forward(self, x):
        return torch.nn.functional.gelu(self.fc(x))


batch_size = 8
seq_len = 512
d_model = 1024
d_ff = 4096


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, d_ff]
