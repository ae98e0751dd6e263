import torch
import torch.nn as nn


class Model(nn.Module):
    """A feature map flattened before a classifier (torch.flatten into a Linear), every other
    channel of it (a strided slice) and the class token of a sequence (tokens[:, 0])."""

    def __init__(self, channels, height, width, classes):
        super().__init__()
        self.fc = nn.Linear(channels * height * width, classes)

    def forward(self, x, tokens):
        logits = self.fc(torch.flatten(torch.relu(x), 1))
        return logits, torch.sigmoid(x[:, 1::2]), tokens[:, 0] * 2.0


batch_size = 4
channels = 8
height = 5
width = 6
classes = 10
seq = 7
dim = 16


def get_inputs():
    return [torch.randn(batch_size, channels, height, width), torch.randn(batch_size, seq, dim)]


def get_init_inputs():
    return [channels, height, width, classes]
