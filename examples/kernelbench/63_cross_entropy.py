import torch
import torch.nn as nn


class Model(nn.Module):
    """Cross entropy with int64 class-index targets, mean over the batch (KernelBench level 1,
    problem 95)."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.nn.functional.cross_entropy(predictions, targets)


batch_size = 1024
num_classes = 1000


def get_inputs():
    return [torch.rand(batch_size, num_classes), torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return []
