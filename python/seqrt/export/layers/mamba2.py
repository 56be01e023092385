"""A Mamba-2 block: x + mixer(RMSNorm(x)), the mixer built around seqrt::SSD
as in the reference implementation (in_proj → z, xBC, dt; short causal conv
+ SiLU on xBC; SSD with D and z; gated RMSNorm; out_proj). The z gate is the
SSD op's (y·silu(z)) before the norm, Mamba-2's norm_before_gate=False."""

import torch
from torch import nn
from torch.nn import functional as F

from ..ops import ssd
from .common import CausalDepthwiseConv, RMSNorm, dt_bias_init


class Mamba2Mixer(nn.Module):
    def __init__(self, d_model: int, d_state: int = 16, d_conv: int = 4,
                 expand: int = 2, head_dim: int = 8, groups: int = 1,
                 chunk_size: int = 256):
        super().__init__()
        self.d_inner = expand * d_model
        self.heads = self.d_inner // head_dim
        self.head_dim = head_dim
        self.groups = groups
        self.d_state = d_state
        self.chunk_size = chunk_size
        conv_dim = self.d_inner + 2 * groups * d_state
        self.in_proj = nn.Linear(d_model, self.d_inner + conv_dim + self.heads,
                                 bias=False)
        self.conv = CausalDepthwiseConv(conv_dim, d_conv)
        self.dt_bias = nn.Parameter(dt_bias_init(self.heads))
        self.A_log = nn.Parameter(torch.log(torch.empty(self.heads).uniform_(1, 16)))
        self.D = nn.Parameter(torch.ones(self.heads))
        self.norm = RMSNorm(self.d_inner)
        self.out_proj = nn.Linear(self.d_inner, d_model, bias=False)

    def forward(self, u):  # (B,L,d_model)
        b, length, _ = u.shape
        gn = self.groups * self.d_state
        z, xbc, dt = self.in_proj(u).split(
            [self.d_inner, self.d_inner + 2 * gn, self.heads], dim=-1)
        xbc = F.silu(self.conv(xbc.transpose(1, 2))).transpose(1, 2)
        x, bm, cm = xbc.split([self.d_inner, gn, gn], dim=-1)
        y, _ = ssd(x.reshape(b, length, self.heads, self.head_dim), dt,
                   -torch.exp(self.A_log),
                   bm.reshape(b, length, self.groups, self.d_state),
                   cm.reshape(b, length, self.groups, self.d_state), self.D,
                   z.reshape(b, length, self.heads, self.head_dim), self.dt_bias,
                   chunk_size=self.chunk_size)
        return self.out_proj(self.norm(y.reshape(b, length, self.d_inner)))


class Mamba2Block(nn.Module):
    def __init__(self, d_model: int, **mixer_args):
        super().__init__()
        self.norm = RMSNorm(d_model)
        self.mixer = Mamba2Mixer(d_model, **mixer_args)

    def forward(self, x):
        return x + self.mixer(self.norm(x))
