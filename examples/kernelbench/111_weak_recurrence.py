import torch
import torch.nn as nn


class Model(nn.Module):
    """A two-layer LSTM over a long sequence of weak inputs (a sensor gain of 1e-3) from a
    state at rest (h0 = c0 = 0), a linear head on the last step. The output depends on the
    inputs, but by about 1e-5 between two random draws at outputs of order 0.1: well above
    fp32 rounding (~1e-8), below fp32_strict's default band (1e-4), which a kernel writing a
    constant would pass. The importer must keep the problem and tighten its tolerance."""

    def __init__(self, input_size, hidden_size, num_layers, output_size):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_size, output_size)

    def forward(self, x, h0, c0):
        out, _ = self.lstm(x * 1e-3, (h0, c0))
        return self.fc(out[:, -1, :])


batch_size = 4
sequence_length = 64
input_size = 8
hidden_size = 48
num_layers = 2
output_size = 4


def get_inputs():
    state = (num_layers, batch_size, hidden_size)
    return [torch.rand(batch_size, sequence_length, input_size), torch.zeros(state),
            torch.zeros(state)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size]
