import torch
import torch.nn as nn


class Model(nn.Module):
    """BatchNorm2d (KernelBench level 1) as KernelBench runs it: a fresh module, so in training
    mode - each channel normalized with the mean and biased variance of the batch over the
    sample and spatial dims, then the affine weight and bias. The running-statistics update is
    a side effect the output does not depend on (not reproduced)."""

    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)

    def forward(self, x):
        return self.bn(x)


batch_size = 16
features = 64
dim1 = 256
dim2 = 256


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [features]
