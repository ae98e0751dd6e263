import torch
import torch.nn as nn


class Model(nn.Module):
    """Product reduction over a dimension (KernelBench level 1, problem 50): torch.prod over dim 1
    imports as one prod op and plans as one column reduction (init 1, multiply, f32)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.prod(x, dim=self.dim)


batch_size = 16
dim1 = 256
dim2 = 256
reduction_dim = 1


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduction_dim]
