"""The demo's character-level hybrid language model.

    tokens (1, seq) → embedding → Mamba, attention (+MLP), Mamba,
    Titans memory (+MLP), Mamba → RMSNorm → logits (tied to the embedding)

Every layer carries its decode state explicitly, so one exported graph
serves both the prompt (seq = T) and each decode step (seq = 1):

    Mamba i     past_conv<i> (1, Di, K−1)  the last K−1 inputs of the conv
                past_ssm<i>  (1, Di, N)    the selective scan's state
    attention   past_key, past_value (1, H, past_len, hd)   the KV cache
    memory      past_memory (1, H, 3P)  the memory MLP's weights, momentum
                and anchor, stored as the difference from their initial
                value, so the runtime's zero initial state is the right one
                past_position (1,)  tokens read so far (chunk alignment)

Each `past_X` input has a `present_X` output of the same shape (the KV
cache grows by seq). With no state given (training), every layer starts
from its initial state.

Training uses `fast=True`: `fast_selective_scan` and `fast_neural_memory`
compute what can be computed for all tokens at once and loop over time only
for the recurrence itself (the eager seqrt ops loop over everything, token
by token). python/tests/test_demo_model.py checks that they equal the seqrt
ops. Export uses the seqrt ops themselves.
"""

import dataclasses
import math
from typing import Dict, List, Optional, Tuple

import torch
from torch import nn
from torch.nn import functional as F

import seqrt.export as sx
from seqrt.export.layers.common import RMSNorm, dt_bias_init, merge_heads, split_heads

State = Dict[str, torch.Tensor]


@dataclasses.dataclass
class Config:
    vocab: int
    dim: int = 128
    layers: Tuple[str, ...] = ("mamba", "attention", "mamba", "memory", "mamba")
    heads: int = 4
    d_state: int = 16
    d_conv: int = 4
    expand: int = 2
    memory_hidden: int = 2  # memory MLP width = memory_hidden · head_dim
    memory_chunk: int = 4


def fast_selective_scan(u, delta, A, Bm, Cm, Dskip, z, delta_bias):
    """seqrt::SelectiveScan with one group, delta_softplus, from a zero state:
    the recurrence h_t = exp(Δ_t A) h_{t−1} + Δ_t B_t u_t with everything
    but the sum computed for all t at once. Time goes first and is split
    with unbind: a slice per step would cost a full-size gradient each in
    the backward pass. Returns (y, final state)."""
    delta = F.softplus(delta + delta_bias[:, None], threshold=20.0)  # (B,D,L)
    delta_t = delta.permute(2, 0, 1)[..., None]  # (L,B,D,1)
    decay = torch.exp(delta_t * A)  # (L,B,D,N)
    drive = delta_t * u.permute(2, 0, 1)[..., None] * Bm[:, 0].permute(2, 0, 1)[:, :, None]
    h = u.new_zeros(u.shape[0], u.shape[1], A.shape[1])
    states = []
    for a, b in zip(decay.unbind(0), drive.unbind(0)):
        h = a * h + b
        states.append(h)
    hs = torch.stack(states, dim=0)  # (L,B,D,N)
    y = (hs * Cm[:, 0].permute(2, 0, 1)[:, :, None]).sum(-1).permute(1, 2, 0)
    y = y + Dskip[:, None] * u
    return y * F.silu(z), h


def _gelu_grad(x):
    return 0.5 * (1.0 + torch.erf(x * math.sqrt(0.5))) + x * torch.exp(-0.5 * x * x) / math.sqrt(
        2.0 * math.pi)


def fast_neural_memory(q, k, v, theta, eta, alpha, W1, W2, chunk_size: int):
    """seqrt::NeuralMemory (depth 2, GELU, retrieve after update) from the
    initial state at position 0. Within a chunk every token's gradient is
    taken at the chunk's anchor weights, so a chunk's gradients are computed
    at once; only the momentum/weight update loops over tokens, and the
    read-outs M_t(q_t) are computed afterwards from the stacked weights
    (products and sums: this torch's batched matmul loops over the batch).
    Returns (y, present_state) as the op does."""
    bsz, heads, length, _ = q.shape
    w1 = W1[None].expand(bsz, *W1.shape)
    w2 = W2[None].expand(bsz, *W2.shape)
    s1, s2 = torch.zeros_like(w1), torch.zeros_like(w2)
    a1, a2 = w1, w2
    gates = [g[..., None, None].unbind(2) for g in (theta, eta, alpha)]  # (B,H,1,1) each
    w1s, w2s = [], []
    t = 0
    for kc, vc in zip(k.split(chunk_size, dim=2), v.split(chunk_size, dim=2)):
        a1, a2 = w1, w2
        h = torch.matmul(kc, a1)  # (B,H,C,m)
        act = F.gelu(h)
        r = 2.0 * (torch.matmul(act, a2) - vc)  # (B,H,C,d)
        back = torch.matmul(r, a2.transpose(-1, -2)) * _gelu_grad(h)  # (B,H,C,m)
        g1 = kc[..., :, None] * back[..., None, :]  # (B,H,C,d,m)
        g2 = act[..., :, None] * r[..., None, :]  # (B,H,C,m,d)
        for g1t, g2t in zip(g1.unbind(2), g2.unbind(2)):
            th, et, al = gates[0][t], gates[1][t], gates[2][t]
            s1 = et * s1 - th * g1t
            s2 = et * s2 - th * g2t
            w1 = (1.0 - al) * w1 + s1
            w2 = (1.0 - al) * w2 + s2
            w1s.append(w1)
            w2s.append(w2)
            t += 1
    hidden = F.gelu((q[..., None] * torch.stack(w1s, dim=2)).sum(-2))  # (B,H,L,m)
    y = (hidden[..., None] * torch.stack(w2s, dim=2)).sum(-2)  # (B,H,L,d)
    state = torch.cat([x.reshape(bsz, heads, -1) for x in (w1, w2, s1, s2, a1, a2)], dim=2)
    return y, state


class Mamba(nn.Module):
    """Mamba-1 mixer with its conv and scan state carried in and out."""

    def __init__(self, c: Config):
        super().__init__()
        self.d_inner = c.expand * c.dim
        self.d_state = c.d_state
        self.d_conv = c.d_conv
        self.dt_rank = math.ceil(c.dim / 16)
        self.norm = RMSNorm(c.dim)
        self.in_proj = nn.Linear(c.dim, 2 * self.d_inner, bias=False)
        self.conv_weight = nn.Parameter(torch.randn(self.d_inner, c.d_conv) / math.sqrt(c.d_conv))
        self.conv_bias = nn.Parameter(torch.zeros(self.d_inner))
        self.x_proj = nn.Linear(self.d_inner, self.dt_rank + 2 * c.d_state, bias=False)
        self.dt_proj = nn.Linear(self.dt_rank, self.d_inner, bias=False)
        self.dt_bias = nn.Parameter(dt_bias_init(self.d_inner))
        a = torch.arange(1, c.d_state + 1, dtype=torch.float32)
        self.A_log = nn.Parameter(torch.log(a).repeat(self.d_inner, 1))
        self.D = nn.Parameter(torch.ones(self.d_inner))
        self.out_proj = nn.Linear(self.d_inner, c.dim, bias=False)

    def conv(self, u, past):
        """Causal depthwise conv over [past, u]; the last K−1 inputs are the
        next state. Written as K shifted products so it exports as plain
        Slice/Mul/Add (no Conv padding tricks)."""
        k = self.d_conv
        if past is None:
            past = u.new_zeros(u.shape[0], u.shape[1], k - 1)
        full = torch.cat([past, u], dim=2)  # (B,Di,K−1+L)
        length = full.shape[2] - (k - 1)
        out = self.conv_bias[:, None]
        for i in range(k):
            out = out + full[:, :, i:i + length] * self.conv_weight[:, i, None]
        return out, full[:, :, length:]

    def forward(self, x, conv_state=None, ssm_state=None, fast=False):
        xz = self.in_proj(self.norm(x)).transpose(1, 2)  # (B,2·Di,L)
        u, z = xz.split([self.d_inner, self.d_inner], dim=1)
        u, conv_state = self.conv(u, conv_state)
        u = F.silu(u)
        dt, bm, cm = self.x_proj(u.transpose(1, 2)).split(
            [self.dt_rank, self.d_state, self.d_state], dim=-1)
        delta = self.dt_proj(dt).transpose(1, 2)  # (B,Di,L)
        bm = bm.transpose(1, 2).unsqueeze(1)  # (B,1,N,L)
        cm = cm.transpose(1, 2).unsqueeze(1)
        a = -torch.exp(self.A_log)
        if fast and ssm_state is None:
            y, ssm_state = fast_selective_scan(u, delta, a, bm, cm, self.D, z, self.dt_bias)
        else:
            y, ssm_state = sx.selective_scan(u, delta, a, bm, cm, self.D, z, self.dt_bias,
                                             ssm_state, delta_softplus=True)
        return x + self.out_proj(y.transpose(1, 2)), conv_state, ssm_state


class MLP(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = RMSNorm(dim)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


class Attention(nn.Module):
    """Causal softmax attention with a KV cache, then an MLP. No positional
    encoding: the Mamba layers before it already mark positions."""

    def __init__(self, c: Config):
        super().__init__()
        self.heads = c.heads
        self.norm = RMSNorm(c.dim)
        self.qkv = nn.Linear(c.dim, 3 * c.dim)
        self.out = nn.Linear(c.dim, c.dim)
        self.mlp = MLP(c.dim)

    def forward(self, x, past_key=None, past_value=None):
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        q, k, v = (split_heads(t, self.heads) for t in (q, k, v))
        y, key, value = sx.attention(q, k, v, None, past_key, past_value, is_causal=True)
        return self.mlp(x + self.out(merge_heads(y))), key, value


def unit_norm(x, eps: float = 1e-5):
    """x/‖x‖ over the last axis: keys and queries of norm 1 keep the
    memory's gradient steps bounded."""
    return x * torch.rsqrt(x.pow(2).sum(-1, keepdim=True) + eps)


class Memory(nn.Module):
    """Titans neural memory (seqrt::NeuralMemory, depth 2, GELU) as a layer,
    then an MLP. Every token of a chunk steps from the chunk's anchor
    weights, so a chunk of C tokens acts like one step of rate C·θ/(1−η);
    with θ ≤ 0.05, η ≤ 0.6, C = 4 (≤ 0.5) and forgetting α ≥ 0.02 the memory
    stays bounded (θ ≤ 0.1, η ≤ 0.9, C = 8 diverged to inf within one
    training step)."""

    def __init__(self, c: Config):
        super().__init__()
        self.heads = c.heads
        self.head_dim = c.dim // c.heads
        self.hidden = c.memory_hidden * self.head_dim
        self.chunk = c.memory_chunk
        self.norm = RMSNorm(c.dim)
        self.qkv = nn.Linear(c.dim, 3 * c.dim, bias=False)
        self.gates = nn.Linear(c.dim, 3 * c.heads)
        d, m = self.head_dim, self.hidden
        self.W1 = nn.Parameter(torch.randn(c.heads, d, m) / math.sqrt(d))
        self.W2 = nn.Parameter(torch.randn(c.heads, m, d) / math.sqrt(m))
        self.out = nn.Linear(c.dim, c.dim, bias=False)
        self.mlp = MLP(c.dim)

    def initial_state(self):
        """(H, 3P): weights W1,W2, zero momentum, anchor W1,W2."""
        w = torch.cat([self.W1.reshape(self.heads, -1), self.W2.reshape(self.heads, -1)], dim=1)
        return torch.cat([w, torch.zeros_like(w), w], dim=1)

    def forward(self, x, past_memory=None, past_position=None, fast=False):
        h = self.norm(x)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        q = unit_norm(split_heads(q, self.heads))
        k = unit_norm(split_heads(k, self.heads))
        v = split_heads(v, self.heads)
        theta, eta, alpha = self.gates(h).transpose(1, 2).chunk(3, dim=1)  # (B,H,L)
        theta = 0.05 * torch.sigmoid(theta)
        eta = 0.6 * torch.sigmoid(eta)
        alpha = 0.02 + 0.08 * torch.sigmoid(alpha)
        init = self.initial_state()[None]
        if fast and past_memory is None and past_position is None:
            y, state = fast_neural_memory(q, k, v, theta, eta, alpha, self.W1, self.W2, self.chunk)
            return self.mlp(x + self.out(merge_heads(y))), state - init
        state = None if past_memory is None else past_memory + init
        y, state = sx.neural_memory(q, k, v, theta, eta, alpha, self.W1, self.W2, state,
                                    past_position, depth=2, activation="gelu",
                                    chunk_size=self.chunk)
        out = self.mlp(x + self.out(merge_heads(y)))
        return out, state - init


class CharLM(nn.Module):
    def __init__(self, c: Config):
        super().__init__()
        self.config = c
        self.embedding = nn.Embedding(c.vocab, c.dim)
        nn.init.normal_(self.embedding.weight, std=c.dim**-0.5)
        blocks = {"mamba": Mamba, "attention": Attention, "memory": Memory}
        self.blocks = nn.ModuleList(blocks[kind](c) for kind in c.layers)
        self.norm = RMSNorm(c.dim)

    def forward(self, tokens, state: Optional[State] = None, fast: bool = False):
        """tokens (B,L) → (logits (B,L,V), present state by `past_*` name).
        `state` None starts every layer from its initial state."""
        x = self.embedding(tokens)
        s = state or {}
        present: State = {}
        for i, block in enumerate(self.blocks):
            if isinstance(block, Mamba):
                x, conv, ssm = block(x, s.get(f"past_conv{i}"), s.get(f"past_ssm{i}"), fast)
                present[f"past_conv{i}"], present[f"past_ssm{i}"] = conv, ssm
            elif isinstance(block, Attention):
                x, key, value = block(x, s.get("past_key"), s.get("past_value"))
                present["past_key"], present["past_value"] = key, value
            else:
                position = s.get("past_position")
                x, memory = block(x, s.get("past_memory"), position, fast)
                start = position if position is not None else torch.zeros(
                    tokens.shape[0], dtype=torch.int64)
                present["past_memory"] = memory
                present["past_position"] = start + tokens.shape[1]
        logits = torch.matmul(self.norm(x), self.embedding.weight.t())
        return logits, present

    def state_names(self) -> List[str]:
        """The `past_*` names in graph input order."""
        names = []
        for i, block in enumerate(self.blocks):
            if isinstance(block, Mamba):
                names += [f"past_conv{i}", f"past_ssm{i}"]
            elif isinstance(block, Attention):
                names += ["past_key", "past_value"]
            else:
                names += ["past_memory", "past_position"]
        return names


class Exportable(nn.Module):
    """CharLM with positional state inputs and outputs, for `sx.export`:
    (tokens, past_*...) → (logits, present_*...)."""

    def __init__(self, model: CharLM):
        super().__init__()
        self.model = model
        self.names = model.state_names()

    def forward(self, tokens, *past):
        logits, present = self.model(tokens, dict(zip(self.names, past)))
        return (logits,) + tuple(present[n] for n in self.names)


def example_state(model: CharLM, past_len: int) -> State:
    """A random state for each `past_*` input (batch 1), KV cache of
    `past_len` rows; used to trace the export and in the tests."""
    c = model.config
    state: State = {}
    for i, block in enumerate(model.blocks):
        if isinstance(block, Mamba):
            state[f"past_conv{i}"] = torch.randn(1, block.d_inner, c.d_conv - 1)
            state[f"past_ssm{i}"] = 0.1 * torch.randn(1, block.d_inner, c.d_state)
        elif isinstance(block, Attention):
            hd = c.dim // c.heads
            state["past_key"] = torch.randn(1, c.heads, past_len, hd)
            state["past_value"] = torch.randn(1, c.heads, past_len, hd)
        else:
            state["past_memory"] = 0.01 * torch.randn(1, c.heads, block.initial_state().shape[1])
            state["past_position"] = torch.tensor([past_len], dtype=torch.int64)
    return state
