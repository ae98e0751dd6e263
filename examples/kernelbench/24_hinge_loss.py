import torch
import torch.nn as nn


class Model(nn.Module):
    """Hinge loss (KernelBench level 1, problem 100): the mean over all elements of
    max(0, 1 - prediction * target), the targets (-1 or 1) one per row, broadcast."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


batch_size = 128
input_shape = (4096,)
dim = 1


def get_inputs():
    return [torch.randn(batch_size, *input_shape),
            torch.randint(0, 2, (batch_size, 1)).float() * 2 - 1]


def get_init_inputs():
    return []
