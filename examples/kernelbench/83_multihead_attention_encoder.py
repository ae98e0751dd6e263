import torch
import torch.nn as nn


class Model(nn.Module):
    """nn.MultiheadAttention (its output only) then an nn.TransformerEncoderLayer: modules that
    return a tuple or branch on their inputs inside, imported as their matmuls, softmax and
    norms."""

    def __init__(self, embed_dim, num_heads, ff_dim):
        super().__init__()
        self.attn = nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)
        self.norm = nn.LayerNorm(embed_dim)
        self.layer = nn.TransformerEncoderLayer(embed_dim, num_heads, ff_dim, dropout=0.0,
                                                batch_first=True)

    def forward(self, x):
        a, _ = self.attn(x, x, x)
        return self.layer(self.norm(a + x))


batch_size = 4
seq_len = 48
embed_dim = 32
num_heads = 4
ff_dim = 64


def get_inputs():
    return [torch.randn(batch_size, seq_len, embed_dim)]


def get_init_inputs():
    return [embed_dim, num_heads, ff_dim]
