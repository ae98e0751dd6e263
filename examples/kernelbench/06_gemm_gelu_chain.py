import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Matmul, scale, bias, then a chain of activations: gelu (tanh), gelu (erf), tanh."""

    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) * 0.05)
        self.bias = nn.Parameter(torch.randn(out_features))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = torch.matmul(x, self.weight)
        x = x * self.scaling_factor + self.bias
        x = F.gelu(x, approximate="tanh")
        x = torch.nn.functional.gelu(x)
        return torch.tanh(x) - 0.5


batch_size = 256
in_features = 512
out_features = 1024
scaling_factor = 0.5


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scaling_factor]
