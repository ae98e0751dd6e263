import torch
import torch.nn as nn


class Model(nn.Module):
    """A masked prefix sum (KernelBench level 1, problem 93): x times a bool mask, then cumsum
    over dim 1."""

    def __init__(self, dim=1):
        super().__init__()
        self.dim = dim

    def forward(self, x, mask):
        return torch.cumsum(x * mask, dim=self.dim)


batch_size = 256
input_shape = (2048,)
dim = 1


def get_inputs():
    x = torch.rand(batch_size, *input_shape)
    mask = torch.randint(0, 2, x.shape).bool()
    return [x, mask]


def get_init_inputs():
    return [dim]
