import torch
import torch.nn as nn


class Model(nn.Module):
    """Attention inside square windows with a learned bias over token pairs: the windows cut
    out by view (the window's two extents alike, its token count a number of forward's, not a
    size variable), scores of a window against itself plus the bias, softmax over the keys, a
    row mean of the scores beside it. The window has as many tokens as a head has channels, so
    the scores [.., tokens, tokens] and q [.., tokens, head_dim] each have two axes of one
    extent: query and key axes must stay two dims for the softmax and the mean."""

    def __init__(self, dim, heads, window):
        super().__init__()
        self.heads, self.window = heads, window
        self.qkv = nn.Linear(dim, 3 * dim)
        self.bias = nn.Parameter(torch.randn(heads, window * window, window * window) * 0.1)

    def forward(self, x):
        b, h, w, c = x.shape
        k, n = self.window, self.window * self.window
        win = x.view(b, h // k, k, w // k, k, c).permute(0, 1, 3, 2, 4, 5).reshape(-1, n, c)
        qkv = self.qkv(win).reshape(-1, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, kk, v = qkv[0], qkv[1], qkv[2]
        scores = (q @ kk.transpose(-2, -1)) * (c // self.heads) ** -0.5 + self.bias
        att = torch.softmax(scores, dim=-1)
        return att @ v + scores.mean(dim=-1, keepdim=True)


batch_size = 2
height = 8
width = 8
dim = 32
heads = 2
window = 4


def get_inputs():
    return [torch.rand(batch_size, height, width, dim)]


def get_init_inputs():
    return [dim, heads, window]
