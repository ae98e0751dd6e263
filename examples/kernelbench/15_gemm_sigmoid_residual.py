import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear with in_features == out_features, sigmoid, scaling, and the linear's own output
    added back (the KernelBench level-2 "Gemm_Sigmoid_Scaling_ResidualAdd" pattern)."""

    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.gemm = nn.Linear(input_size, hidden_size)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.gemm(x)
        original_x = x
        x = torch.sigmoid(x)
        x = x * self.scaling_factor
        return x + original_x


batch_size = 1024
input_size = 4096
hidden_size = 4096
scaling_factor = 2.0


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, scaling_factor]
