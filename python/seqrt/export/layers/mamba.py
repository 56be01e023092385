"""A Mamba (Mamba-1) block: x + mixer(RMSNorm(x)), the mixer built around
seqrt::SelectiveScan as in the reference implementation (in_proj → short
causal conv + SiLU → x_proj → Δ, B, C → selective scan gated by z →
out_proj)."""

import math
from typing import Optional

import torch
from torch import nn
from torch.nn import functional as F

from ..ops import selective_scan
from .common import CausalDepthwiseConv, RMSNorm, dt_bias_init


class MambaMixer(nn.Module):
    def __init__(self, d_model: int, d_state: int = 16, d_conv: int = 4,
                 expand: int = 2, dt_rank: Optional[int] = None):
        super().__init__()
        self.d_inner = expand * d_model
        self.d_state = d_state
        self.dt_rank = dt_rank or math.ceil(d_model / 16)
        self.in_proj = nn.Linear(d_model, 2 * self.d_inner, bias=False)
        self.conv = CausalDepthwiseConv(self.d_inner, d_conv)
        self.x_proj = nn.Linear(self.d_inner, self.dt_rank + 2 * d_state, bias=False)
        self.dt_proj = nn.Linear(self.dt_rank, self.d_inner, bias=False)
        self.dt_bias = nn.Parameter(dt_bias_init(self.d_inner))
        a = torch.arange(1, d_state + 1, dtype=torch.float32)
        self.A_log = nn.Parameter(torch.log(a).repeat(self.d_inner, 1))
        self.D = nn.Parameter(torch.ones(self.d_inner))
        self.out_proj = nn.Linear(self.d_inner, d_model, bias=False)

    def forward(self, x):  # (B,L,d_model)
        xz = self.in_proj(x).transpose(1, 2)  # (B,2·Di,L)
        u, z = xz.split([self.d_inner, self.d_inner], dim=1)
        u = F.silu(self.conv(u))
        dt, bm, cm = self.x_proj(u.transpose(1, 2)).split(
            [self.dt_rank, self.d_state, self.d_state], dim=-1)
        delta = self.dt_proj(dt).transpose(1, 2)  # (B,Di,L)
        bm = bm.transpose(1, 2).unsqueeze(1)  # (B,1,N,L)
        cm = cm.transpose(1, 2).unsqueeze(1)
        y, _ = selective_scan(u, delta, -torch.exp(self.A_log), bm, cm, self.D,
                              z, self.dt_bias, delta_softplus=True)
        return self.out_proj(y.transpose(1, 2))


class MambaBlock(nn.Module):
    def __init__(self, d_model: int, **mixer_args):
        super().__init__()
        self.norm = RMSNorm(d_model)
        self.mixer = MambaMixer(d_model, **mixer_args)

    def forward(self, x):
        return x + self.mixer(self.norm(x))
