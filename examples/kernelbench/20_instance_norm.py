import torch
import torch.nn as nn


class Model(nn.Module):
    """InstanceNorm2d (KernelBench level 1, its sizes): each (sample, channel) plane normalized
    over its spatial extent, no affine parameters and no running statistics - layer_norm over
    the two spatial dims, so the import check can shrink every dim (64 channels included)."""

    def __init__(self, num_features: int):
        super().__init__()
        self.inorm = nn.InstanceNorm2d(num_features=num_features)

    def forward(self, x):
        return self.inorm(x)


batch_size = 16
features = 64
dim1 = 256
dim2 = 256


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [features]
