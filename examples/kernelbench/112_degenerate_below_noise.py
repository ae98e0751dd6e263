import torch
import torch.nn as nn


class Model(nn.Module):
    """A GEMM through a softmax at a temperature of 1e9: every row comes out uniform to within
    far less than fp32 rounding, so no kernel that computes it can be told from one that writes
    1/out_features everywhere. Truly degenerate at its own sizes: the importer must refuse it."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.softmax(self.gemm(x) / 1e9, dim=1)


batch_size = 64
in_features = 256
out_features = 512


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
