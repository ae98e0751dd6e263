import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Decay between chunks of a state-space scan: per chunk a log-decay, a zero chunk in front
    (F.pad), its running sum over the chunks - a row of chunks + 1 = 3 values, shorter than one
    16-byte vector -, the pairwise differences of that sum (chunk z after chunk c), masked to
    z >= c and exponentiated, then applied to the chunk states. The differences [B, H, Z, Z] have
    two axes of one extent."""

    def __init__(self):
        super().__init__()

    def forward(self, log_decay, states):
        a = F.pad(log_decay, (1, 0))  # [B, H, Z]
        c = torch.cumsum(a, dim=-1)
        z = c.size(-1)
        seg = c[..., :, None] - c[..., None, :]
        mask = torch.tril(torch.ones(z, z, dtype=torch.bool, device=c.device))
        decay = torch.exp(seg.masked_fill(~mask, -torch.inf))
        return torch.einsum("bhzc,bchp->bzhp", decay, states)


batch_size = 8
heads = 4
chunks = 2
head_dim = 32


def get_inputs():
    return [torch.randn(batch_size, heads, chunks) * 0.5,
            torch.randn(batch_size, chunks + 1, heads, head_dim)]


def get_init_inputs():
    return []
