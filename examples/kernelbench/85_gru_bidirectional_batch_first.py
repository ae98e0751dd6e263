# A bidirectional two-layer GRU (batch first) whose final hidden states go through a Linear head
# (kforge's own KernelBench-format example: the spec's gru op with result h_n, then linear).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features, hidden, layers, classes):
        super().__init__()
        self.encoder = nn.GRU(features, hidden, layers, batch_first=True, bidirectional=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, tokens, state):
        _, h_n = self.encoder(tokens, state)
        return self.head(h_n)


batch = 3
steps = 9
features = 20
hidden = 16
layers = 2
classes = 5


def get_inputs():
    return [torch.randn(batch, steps, features), torch.randn(2 * layers, batch, hidden)]


def get_init_inputs():
    return [features, hidden, layers, classes]
