import torch
import torch.nn as nn


class Model(nn.Module):
    """Kullback-Leibler divergence (KernelBench level 1, problem 98): one value, the sum over all
    elements of targets * (log(targets) - log(predictions)) divided by the number of rows."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.nn.functional.kl_div(torch.log(predictions), targets, reduction="batchmean")


batch_size = 128
input_shape = (4096,)
dim = 1


def get_inputs():
    # two probability distributions per row (strictly positive)
    return [torch.randn(batch_size, *input_shape).softmax(dim=-1),
            torch.randn(batch_size, *input_shape).softmax(dim=-1)]


def get_init_inputs():
    return []
