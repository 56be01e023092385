"""Titans (Behrouz et al., 2024) blocks built on seqrt::NeuralMemory and
seqrt::Attention, wired as seqrt's samples/titans graphs:

- MAC, memory as a context: per segment, retrieve from the memory without
  updating, attend over [persistent, retrieved, segment] with a causal mask,
  write the attention output into the memory (state carried across
  segments), gate the output by the updated memory's read-out.
- MAG, memory as a gate: sliding-window attention (persistent tokens always
  visible) gated by σ of the memory branch, both RMS-normalised.
- MAL, memory as a layer: the memory branch, then sliding-window attention.

Every block ends with the residual x + o·W_o.
"""

import math

import torch
from torch import nn
from torch.nn import functional as F

from ..ops import neural_memory
from .common import MultiHeadAttention, RMSNorm, merge_heads, split_heads


def unit_norm(x, eps: float = 1e-5):
    """x/‖x‖ over the last axis (RMS norm with scale 1/√d)."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) / math.sqrt(x.shape[-1])


class MemoryBranch(nn.Module):
    """q, k, v and the gates from x, then seqrt::NeuralMemory (depth 2)."""

    def __init__(self, dim: int, heads: int, hidden_factor: int = 4,
                 chunk_size: int = 4):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.hidden = hidden_factor * self.head_dim
        self.chunk_size = chunk_size
        self.q = nn.Linear(dim, dim, bias=False)
        self.k = nn.Linear(dim, dim, bias=False)
        self.v = nn.Linear(dim, dim, bias=False)
        self.gates = nn.Linear(dim, 3 * heads, bias=False)  # θ, η, α
        d, m = self.head_dim, self.hidden
        self.W1 = nn.Parameter(torch.randn(heads, d, m) / math.sqrt(d))
        self.W2 = nn.Parameter(torch.randn(heads, m, d) / math.sqrt(m))

    def forward(self, x, past_state=None, position=None):
        """(B,L,D) → (y (B,L,D), present_state)."""
        q = unit_norm(split_heads(self.q(x), self.heads))
        k = unit_norm(split_heads(self.k(x), self.heads))
        v = split_heads(self.v(x), self.heads)
        h = self.heads
        theta, eta, alpha = self.gates(x).transpose(1, 2).split([h, h, h], dim=1)
        y, state = neural_memory(
            q, k, v, 0.2 * torch.sigmoid(theta), torch.sigmoid(eta + 2.0),
            torch.sigmoid(alpha - 4.0), self.W1, self.W2, past_state, position,
            depth=2, activation="gelu", chunk_size=self.chunk_size)
        return merge_heads(y), state

    def weights(self, state, batch: int):
        """The memory MLP's weights (B,H,d,m), (B,H,m,d): from a present
        state (its first block), or the initial W1/W2."""
        d, m, h = self.head_dim, self.hidden, self.heads
        if state is None:
            return (self.W1[None].expand(batch, h, d, m),
                    self.W2[None].expand(batch, h, m, d))
        return (state[:, :, :d * m].reshape(batch, h, d, m),
                state[:, :, d * m:2 * d * m].reshape(batch, h, m, d))


class _TitansBase(nn.Module):
    def __init__(self, dim: int, heads: int, persistent: int, chunk_size: int):
        super().__init__()
        self.persistent = nn.Parameter(torch.randn(persistent, dim) * 0.5)
        self.memory = MemoryBranch(dim, heads, chunk_size=chunk_size)
        self.out = nn.Linear(dim, dim, bias=False)

    def with_persistent(self, x):
        p = self.persistent[None].expand(x.shape[0], *self.persistent.shape)
        return torch.cat([p, x], dim=1)


class TitansMAC(_TitansBase):
    def __init__(self, dim: int, heads: int, segment: int = 8, persistent: int = 4,
                 chunk_size: int = 4):
        super().__init__(dim, heads, persistent, chunk_size)
        self.segment = segment
        self.retrieve_q = nn.Linear(dim, dim, bias=False)
        self.attn = MultiHeadAttention(dim, heads)
        s, n_p = segment, persistent
        i = torch.arange(s)[:, None]
        j = torch.arange(s)[None, :]
        causal = j <= i
        mask = torch.cat([torch.ones(s, n_p, dtype=torch.bool), causal, causal], dim=1)
        self.register_buffer("mask", mask)

    def retrieve(self, x, state):
        """M(q) without updating: gelu(q·W1)·W2 per head."""
        w1, w2 = self.memory.weights(state, x.shape[0])
        q = unit_norm(split_heads(self.retrieve_q(x), self.memory.heads))
        return merge_heads(torch.matmul(F.gelu(torch.matmul(q, w1)), w2))

    def forward(self, x):
        b, t, _ = x.shape
        if t % self.segment != 0:
            raise ValueError(f"[TitansMAC] length {t} is not a multiple of the "
                             f"segment {self.segment}")
        state, outputs = None, []
        for start in range(0, t, self.segment):
            xs = x[:, start:start + self.segment]
            h = self.retrieve(xs, state)
            context = torch.cat([self.with_persistent(h), xs], dim=1)
            ys = self.attn(xs, context, self.mask)[0]
            position = (None if start == 0 else
                        torch.full((b,), start, dtype=torch.int64))
            read, state = self.memory(ys, state, position)
            outputs.append(ys * torch.sigmoid(read))
        return x + self.out(torch.cat(outputs, dim=1))


def _window_mask(persistent: int, length: int, window: int):
    """Persistent tokens always visible, else i − W ≤ j ≤ i."""
    n = persistent + length
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    return (j < persistent) | ((j <= i) & (j >= i - window))


class TitansMAG(_TitansBase):
    def __init__(self, dim: int, heads: int, length: int, window: int = 8,
                 persistent: int = 4, chunk_size: int = 4):
        super().__init__(dim, heads, persistent, chunk_size)
        self.attn = MultiHeadAttention(dim, heads, is_causal=True)
        self.register_buffer("mask", _window_mask(persistent, length, window))
        self.norm_attn = RMSNorm(dim, affine=False)
        self.norm_mem = RMSNorm(dim, affine=False)

    def forward(self, x):
        xt = self.with_persistent(x)
        y_attn = self.attn(xt, mask=self.mask)[0]
        y_mem = self.memory(xt)[0]
        o = self.norm_attn(y_attn) * torch.sigmoid(self.norm_mem(y_mem))
        return x + self.out(o[:, self.persistent.shape[0]:])


class TitansMAL(_TitansBase):
    def __init__(self, dim: int, heads: int, window: int = 8, persistent: int = 4,
                 chunk_size: int = 4):
        super().__init__(dim, heads, persistent, chunk_size)
        self.attn = MultiHeadAttention(dim, heads, is_causal=True,
                                       window_left=window)

    def forward(self, x):
        u = self.memory(self.with_persistent(x))[0]
        o = self.attn(u)[0]
        return x + self.out(o[:, self.persistent.shape[0]:])
