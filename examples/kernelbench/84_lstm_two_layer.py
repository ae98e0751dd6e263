# A two-layer LSTM over a batch-first sequence returning the last layer's output at every step
# and the final hidden state of both layers (kforge's own KernelBench-format example: the spec's
# lstm op, docs/problem-spec.md).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features, hidden, layers):
        super().__init__()
        self.rnn = nn.LSTM(features, hidden, layers, batch_first=True)

    def forward(self, x, h0, c0):
        seq, (h_last, _) = self.rnn(x, (h0, c0))
        return seq, h_last


batch = 4
steps = 12
features = 24
hidden = 32
layers = 2


def get_inputs():
    return [torch.randn(batch, steps, features), torch.randn(layers, batch, hidden),
            torch.randn(layers, batch, hidden)]


def get_init_inputs():
    return [features, hidden, layers]
