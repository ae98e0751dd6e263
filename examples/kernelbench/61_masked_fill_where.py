import torch
import torch.nn as nn


class Model(nn.Module):
    """Bool masks from get_inputs(): torch.where picking between two tensors under a mask
    broadcast over the rows, and masked_fill with -inf before a softmax (an attention-style
    mask)."""

    def __init__(self):
        super().__init__()

    def forward(self, x, y, mask, row_mask):
        picked = torch.where(row_mask, x, y)
        scores = torch.softmax(x.masked_fill(mask, float("-inf")), dim=-1)
        return picked, scores


batch_size = 128
dim = 512


def get_inputs():
    x = torch.randn(batch_size, dim)
    y = torch.randn(batch_size, dim)
    mask = torch.rand(batch_size, dim) < 0.25
    row_mask = torch.randint(0, 2, (batch_size, 1)).bool()
    return [x, y, mask, row_mask]


def get_init_inputs():
    return []
