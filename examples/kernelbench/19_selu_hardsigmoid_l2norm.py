import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """SELU, HardSigmoid and an L2 normalization over the features: three KernelBench level-1
    ops the spec writes as several ops each."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = F.hardsigmoid(torch.selu(x))
        return x / torch.norm(x, p=2, dim=1, keepdim=True)


batch_size = 4096
dim = 16384


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
