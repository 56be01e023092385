"""A RetNet layer: X + MSR(LN(X)), then + FFN(LN(·)). Multi-scale retention
is xPos-style rotation of q and k (interleaved pairs), seqrt::Retention with
γ_h = 1 − 2^(−5−h), a per-head RMSNorm and a swish gate, as in RetNet."""

import torch
from torch import nn
from torch.nn import functional as F

from ..ops import retention
from .common import MLP, RMSNorm, merge_heads, split_heads


def rotate_interleaved(x, positions_angle):
    """Rotates pairs (x_2i, x_2i+1) by angle[t, i] (RotaryEmbedding,
    interleaved). x (B,H,T,d), angle (T, d/2)."""
    cos, sin = torch.cos(positions_angle), torch.sin(positions_angle)
    pairs = x.reshape(*x.shape[:-1], -1, 2)
    even, odd = pairs[..., 0], pairs[..., 1]
    rotated = torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1)
    return rotated.reshape(x.shape)


class MultiScaleRetention(nn.Module):
    def __init__(self, dim: int, heads: int, value_factor: int = 2,
                 chunk_size: int = 64):
        super().__init__()
        self.heads = heads
        self.key_dim = dim // heads
        self.chunk_size = chunk_size
        self.q = nn.Linear(dim, dim, bias=False)
        self.k = nn.Linear(dim, dim, bias=False)
        self.v = nn.Linear(dim, dim * value_factor, bias=False)
        self.g = nn.Linear(dim, dim * value_factor, bias=False)
        self.out = nn.Linear(dim * value_factor, dim, bias=False)
        self.norm = RMSNorm(dim * value_factor // heads, affine=False)
        theta = 1.0 / (10000 ** torch.linspace(0, 1, self.key_dim // 2))
        self.register_buffer("theta", theta)

    def forward(self, x):
        t = x.shape[1]
        angle = torch.arange(t, dtype=x.dtype)[:, None] * self.theta[None, :]
        q = rotate_interleaved(split_heads(self.q(x), self.heads), angle)
        k = rotate_interleaved(split_heads(self.k(x), self.heads), angle)
        v = split_heads(self.v(x), self.heads)
        y, _ = retention(q, k, v, chunk_size=self.chunk_size)
        y = merge_heads(self.norm(y))
        return self.out(F.silu(self.g(x)) * y)


class RetNetLayer(nn.Module):
    def __init__(self, dim: int, heads: int, ffn_dim: int, **msr_args):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.msr = MultiScaleRetention(dim, heads, **msr_args)
        self.norm2 = nn.LayerNorm(dim)
        self.ffn = MLP(dim, ffn_dim)

    def forward(self, x):
        x = x + self.msr(self.norm1(x))
        return x + self.ffn(self.norm2(x))
