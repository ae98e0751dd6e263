import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Cosine similarity loss (KernelBench level 1, problem 97): the mean over the rows of
    1 - cos(prediction row, target row)."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        cosine_sim = F.cosine_similarity(predictions, targets, dim=1)
        return torch.mean(1 - cosine_sim)


batch_size = 128
input_shape = (4096,)
dim = 1


def get_inputs():
    return [torch.randn(batch_size, *input_shape), torch.randn(batch_size, *input_shape)]


def get_init_inputs():
    return []
