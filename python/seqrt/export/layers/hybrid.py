"""A hybrid stack: Mamba blocks with an attention block in place of every
N-th one (Jamba-style, e.g. N = 8: one attention layer per seven Mamba)."""

from torch import nn

from .mamba import MambaBlock
from .transformer import GPTBlock


class HybridStack(nn.Module):
    def __init__(self, dim: int, layers: int, heads: int, attention_every: int = 8,
                 **mamba_args):
        super().__init__()
        self.blocks = nn.ModuleList(
            GPTBlock(dim, heads) if (i + 1) % attention_every == 0
            else MambaBlock(dim, **mamba_args) for i in range(layers))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
            if isinstance(x, tuple):
                x = x[0]
        return x
