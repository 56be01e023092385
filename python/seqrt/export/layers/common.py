"""Pieces the ready layers share, in plain PyTorch (standard ONNX ops)."""

import math
from typing import Optional

import torch
from torch import nn
from torch.nn import functional as F

from ..ops import attention


class RMSNorm(nn.Module):
    """x / sqrt(mean(x²) + eps) · weight over the last axis."""

    def __init__(self, dim: int, eps: float = 1e-5, affine: bool = True):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim)) if affine else None

    def forward(self, x):
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return y if self.weight is None else y * self.weight


def split_heads(x, heads: int):
    """(B,T,H·d) → (B,H,T,d)."""
    b, t, _ = x.shape
    return x.reshape(b, t, heads, -1).transpose(1, 2)


def merge_heads(x):
    """(B,H,T,d) → (B,T,H·d)."""
    b, h, t, d = x.shape
    return x.transpose(1, 2).reshape(b, t, h * d)


class CausalDepthwiseConv(nn.Module):
    """Mamba's short convolution: depthwise Conv1d over time, left padded."""

    def __init__(self, channels: int, kernel: int):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel, groups=channels,
                              padding=kernel - 1)

    def forward(self, x):  # (B,C,L)
        return self.conv(x)[..., :x.shape[-1]]


class MultiHeadAttention(nn.Module):
    """Q/K/V projections, seqrt::Attention, output projection. GQA when
    kv_heads < heads; `past_key`/`past_value` continue a KV cache."""

    def __init__(self, dim: int, heads: int, kv_heads: Optional[int] = None,
                 **attention_attrs):
        super().__init__()
        self.heads = heads
        self.kv_heads = kv_heads or heads
        self.head_dim = dim // heads
        self.q = nn.Linear(dim, heads * self.head_dim)
        self.kv = nn.Linear(dim, 2 * self.kv_heads * self.head_dim)
        self.out = nn.Linear(heads * self.head_dim, dim)
        self.attrs = attention_attrs

    def forward(self, x, context=None, mask=None, past_key=None, past_value=None):
        context = x if context is None else context
        q = split_heads(self.q(x), self.heads)
        kv_width = self.kv_heads * self.head_dim
        k, v = self.kv(context).split([kv_width, kv_width], dim=-1)
        k, v = split_heads(k, self.kv_heads), split_heads(v, self.kv_heads)
        y, present_key, present_value = attention(
            q, k, v, mask, past_key, past_value, **self.attrs)
        return self.out(merge_heads(y)), present_key, present_value


class MLP(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))


def inverse_softplus(x: torch.Tensor) -> torch.Tensor:
    return x + torch.log(-torch.expm1(-x))


def dt_bias_init(size: int, dt_min: float = 1e-3, dt_max: float = 1e-1):
    """Mamba's Δ bias: softplus(bias) log-uniform in [dt_min, dt_max]."""
    dt = torch.exp(torch.rand(size) * (math.log(dt_max) - math.log(dt_min)) +
                   math.log(dt_min))
    return inverse_softplus(dt)
