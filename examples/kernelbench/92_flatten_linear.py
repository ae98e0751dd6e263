import torch
import torch.nn as nn


class Model(nn.Module):
    """A feature map flattened before a classifier: x.view(x.size(0), -1) and torch.flatten, as
    level 3 networks write it (a reshape to [batch, channels*height*width])."""

    def __init__(self, channels, height, width, classes):
        super().__init__()
        self.fc = nn.Linear(channels * height * width, classes)

    def forward(self, x):
        y = torch.relu(x).view(x.size(0), -1)
        return self.fc(y), torch.flatten(x, 1).sum(dim=1)


batch_size = 8
channels = 16
height = 6
width = 5
classes = 10


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, height, width, classes]
