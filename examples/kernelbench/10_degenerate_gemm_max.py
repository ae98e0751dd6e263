import torch
import torch.nn as nn


class Model(nn.Module):
    """GEMM, max over dim 1 (keepdim), minus its mean over dim 1, GELU. The max leaves one
    column, so x - mean(x) is 0 and the output is gelu(0) = 0 everywhere: a degenerate problem
    that the importer must flag."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x):
        x = self.gemm(x)
        x = torch.max(x, dim=1, keepdim=True).values
        x = x - x.mean(dim=1, keepdim=True)
        return torch.nn.functional.gelu(x)


batch_size = 128
in_features = 512
out_features = 1024


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
