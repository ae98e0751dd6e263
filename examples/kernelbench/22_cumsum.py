import torch
import torch.nn as nn


class Model(nn.Module):
    """Prefix scans over the last dim (KernelBench level 1, problems 89-91): cumsum, cumprod and
    the reverse cumsum spelled with flips; each imports as one cumsum / cumprod op and plans as
    one row kernel."""

    def __init__(self, dim=1):
        super().__init__()
        self.dim = dim

    def forward(self, x, y, z):
        inclusive = torch.cumsum(x, dim=self.dim)
        product = torch.cumprod(y, dim=self.dim)
        reverse = torch.cumsum(z.flip(self.dim), dim=self.dim).flip(self.dim)
        return inclusive, product, reverse


batch_size = 128
input_shape = (4000,)
dim = 1


def get_inputs():
    return [torch.randn(batch_size, *input_shape), torch.randn(batch_size, *input_shape),
            torch.randn(batch_size, *input_shape)]


def get_init_inputs():
    return [dim]
