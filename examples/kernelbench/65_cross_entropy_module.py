import torch
import torch.nn as nn


class Model(nn.Module):
    """nn.CrossEntropyLoss with reduction="sum" over the logits of a linear layer."""

    def __init__(self, in_features, num_classes):
        super().__init__()
        self.fc = nn.Linear(in_features, num_classes)
        self.loss = nn.CrossEntropyLoss(reduction="sum")

    def forward(self, x, targets):
        return self.loss(self.fc(x), targets)


batch_size = 256
in_features = 128
num_classes = 64


def get_inputs():
    return [torch.randn(batch_size, in_features), torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return [in_features, num_classes]
