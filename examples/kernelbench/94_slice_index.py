import torch
import torch.nn as nn


class Model(nn.Module):
    """Indexing and slicing: steps, negative bounds, an integer index (select), None
    (unsqueeze), Ellipsis, narrow, and the last element by x[:, -1]."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        a = x[:, 1:-1, ::2] * 2.0
        b = x[..., 0] * x[:, :, -1]
        e = x[:, -1]
        c = torch.sigmoid(x[:, None, 2])
        d = x.narrow(2, 3, 5)
        return a, b, c, d, e


batch_size = 6
rows = 10
cols = 16


def get_inputs():
    return [torch.randn(batch_size, rows, cols)]


def get_init_inputs():
    return []
