import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Linear, then element-wise activations (leaky_relu, hardtanh, softplus, mish, silu,
    sigmoid, clamp, dropout in eval mode) and a log_softmax."""

    def __init__(self, in_features, out_features, dropout_p):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, bias=False)
        self.act = nn.LeakyReLU(0.2)
        self.drop = nn.Dropout(dropout_p)

    def forward(self, x):
        x = self.act(self.fc(x))
        x = F.hardtanh(x, min_val=-2.0, max_val=2.0)
        x = F.softplus(x) - 1.0
        x = F.mish(x) + F.silu(x) * torch.sigmoid(x)
        x = torch.clamp(x, min=-0.75) / 2.0
        x = self.drop(x)
        return F.log_softmax(x, dim=-1)


batch_size = 64
in_features = 256
out_features = 384
dropout_p = 0.1


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, dropout_p]
