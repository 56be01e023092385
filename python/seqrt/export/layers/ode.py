"""An ODE-Transformer encoder layer: one Runge-Kutta step y + Σ b_i F_i of
F(y) = a + FFN(LN(y + a)), a = SelfAttention(LN(y)) (a pre-norm encoder
layer's residual branch), exported as seqrt::RungeKutta with F as its body.
With method "euler" it is exactly a pre-norm Transformer encoder layer."""

import torch
from torch import nn

from ..ops import runge_kutta
from .common import MLP, MultiHeadAttention


class EncoderBranch(nn.Module):
    """F(y): self-attention and FFN sublayers without the outer residual."""

    def __init__(self, dim: int, heads: int, ffn_dim: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = MultiHeadAttention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.ffn = MLP(dim, ffn_dim)

    def forward(self, y):
        a = self.attn(self.norm1(y))[0]
        return a + self.ffn(self.norm2(y + a))


class RKEncoderLayer(nn.Module):
    def __init__(self, dim: int, heads: int, ffn_dim: int, method: str = "rk2"):
        super().__init__()
        self.method = method
        self.branch = EncoderBranch(dim, heads, ffn_dim)
        if method == "rk2_gated":
            self.gate_weight = nn.Parameter(torch.zeros(2 * dim))
            self.gate_bias = nn.Parameter(torch.zeros(1))
        else:
            self.gate_weight = self.gate_bias = None

    def forward(self, y):
        return runge_kutta(self.branch, y, self.gate_weight, self.gate_bias,
                           method=self.method)
