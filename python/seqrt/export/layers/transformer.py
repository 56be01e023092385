"""A GPT-style decoder block with a KV cache: prefill takes the prompt and
returns the cache (present_key/value); decode takes one token and the cache
(past_key/value). seqrt::Attention concatenates the cache (OPS.md), causal
with bottom-right aligned positions, so both graphs are one module."""

from typing import Optional

from torch import nn

from .common import MLP, MultiHeadAttention


class GPTBlock(nn.Module):
    def __init__(self, dim: int, heads: int, kv_heads: Optional[int] = None,
                 ffn_dim: Optional[int] = None):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = MultiHeadAttention(dim, heads, kv_heads, is_causal=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = MLP(dim, ffn_dim or 4 * dim)

    def forward(self, x, past_key=None, past_value=None):
        """Returns (y, present_key, present_value)."""
        a, present_key, present_value = self.attn(
            self.norm1(x), past_key=past_key, past_value=past_value)
        x = x + a
        return x + self.mlp(self.norm2(x)), present_key, present_value
