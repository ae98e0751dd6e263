import torch
import torch.nn as nn


class Model(nn.Module):
    """Permutes feeding GEMMs: a [batch, channels, length] sequence permuted to
    [batch, length, channels] for a Linear (as a channels-first model hands features to a
    token MLP), and a batched matmul with a transposed operand made contiguous."""

    def __init__(self, channels, hidden):
        super().__init__()
        self.fc = nn.Linear(channels, hidden)

    def forward(self, x, y):
        t = self.fc(x.permute(0, 2, 1))
        s = torch.bmm(y.permute(0, 2, 1).contiguous(), t)
        return torch.tanh(t), s


batch_size = 2
channels = 16
length = 24
hidden = 32


def get_inputs():
    return [torch.randn(batch_size, channels, length), torch.randn(batch_size, length, 8)]


def get_init_inputs():
    return [channels, hidden]
