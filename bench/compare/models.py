"""The benchmark's own models as seeded PyTorch modules and their export
(the Hugging Face models are in hf_models.py).

BERT and GPT-2 are plain torch (Linear, LayerNorm, manual attention with
softmax, GELU) exported by torch.onnx.export at opset 17, so that seqrt's
passes fuse the decomposed patterns; Mamba, RetNet and Titans use the seqrt
layers and seqrt.export, whose ONNX functions onnxruntime runs.
"""

import dataclasses
import math
import pathlib
from typing import Callable, Dict, List, Tuple

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

import seqrt.export as sx
from seqrt.export import layers

OPSET = 17


def split_heads(x, heads: int):
    b, t, d = x.shape
    return x.reshape(b, t, heads, d // heads).transpose(1, 2)


def merge_heads(x):
    b, h, t, dh = x.shape
    return x.transpose(1, 2).reshape(b, t, h * dh)


def attention(q, k, v, mask=None):
    """softmax(q·kᵀ/√d + mask)·v, decomposed as PyTorch users write it."""
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + mask
    return torch.matmul(torch.softmax(scores, dim=-1), v)


class BertLayer(nn.Module):
    """Post-LN encoder layer (BERT/MiniLM): erf GELU, no padding mask."""

    def __init__(self, dim: int, heads: int, ffn: int):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v = (nn.Linear(dim, dim) for _ in range(3))
        self.o = nn.Linear(dim, dim)
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.up, self.down = nn.Linear(dim, ffn), nn.Linear(ffn, dim)

    def forward(self, x):
        h = self.heads
        a = attention(split_heads(self.q(x), h), split_heads(self.k(x), h),
                      split_heads(self.v(x), h))
        x = self.ln1(x + self.o(merge_heads(a)))
        return self.ln2(x + self.down(F.gelu(self.up(x))))


class BertEncoder(nn.Module):
    def __init__(self, vocab: int, dim: int, heads: int, ffn: int, depth: int,
                 positions: int = 512):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Parameter(torch.randn(positions, dim) * 0.02)
        self.ln = nn.LayerNorm(dim)
        self.layers = nn.ModuleList(BertLayer(dim, heads, ffn) for _ in range(depth))

    def forward(self, input_ids):
        x = self.ln(self.tokens(input_ids) + self.positions[:input_ids.shape[1]])
        for layer in self.layers:
            x = layer(x)
        return x


class GPTLayer(nn.Module):
    """Pre-LN GPT-2 block with tanh GELU; the KV cache is a Concat on the
    sequence axis, and the layer returns the cache it attended over."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.q, self.k, self.v = (nn.Linear(dim, dim) for _ in range(3))
        self.o = nn.Linear(dim, dim)
        self.up, self.down = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x, mask, past_key, past_value):
        h, y = self.heads, self.ln1(x)
        k, v = split_heads(self.k(y), h), split_heads(self.v(y), h)
        if past_key is not None:
            k = torch.cat([past_key, k], dim=2)
            v = torch.cat([past_value, v], dim=2)
        a = attention(split_heads(self.q(y), h), k, v, mask)
        x = x + self.o(merge_heads(a))
        x = x + self.down(F.gelu(self.up(self.ln2(x)), approximate="tanh"))
        return x, k, v


class GPTDecoder(nn.Module):
    """forward(input_ids, position_ids, *past) → (logits, *present), with
    past/present ordered key_0, value_0, key_1, ..."""

    def __init__(self, vocab: int, dim: int, heads: int, depth: int,
                 positions: int = 1024, prompt: int = 0):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Embedding(positions, dim)
        self.layers = nn.ModuleList(GPTLayer(dim, heads) for _ in range(depth))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        # Prefill's causal mask as an additive constant (decode needs none:
        # its one query sees the whole cache).
        causal = torch.ones(prompt, prompt, dtype=torch.bool).triu(1)
        self.register_buffer("mask", torch.zeros(prompt, prompt).masked_fill(
            causal, torch.finfo(torch.float32).min)[None, None])

    def forward(self, input_ids, position_ids, *past):
        x = self.tokens(input_ids) + self.positions(position_ids)
        mask = self.mask if not past else None
        present = []
        for i, layer in enumerate(self.layers):
            pk, pv = (past[2 * i], past[2 * i + 1]) if past else (None, None)
            x, k, v = layer(x, mask, pk, pv)
            present += [k, v]
        return (self.head(self.ln(x)), *present)


class Stack(nn.Module):
    def __init__(self, blocks: List[nn.Module]):
        super().__init__()
        self.blocks = nn.ModuleList(blocks)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


@dataclasses.dataclass
class Case:
    """One timed graph: a model at one shape/phase."""
    model: str          # the --models name
    phase: str          # shown in the table
    key: str            # file stem; encodes every size, so caches stay valid
    tokens: int         # tokens one run processes (for tokens/s)
    seqrt_ops: bool     # ORT runs seqrt ops through ONNX function bodies
    # Writes the .onnx to the path given; returns the feeds by input name.
    write: Callable[[pathlib.Path], Dict[str, np.ndarray]]


Build = Callable[[], Tuple[nn.Module, Dict[str, np.ndarray], List[str]]]


def module_case(model: str, phase: str, key: str, tokens: int,
                seqrt_ops: bool, build: Build) -> Case:
    """A Case for build() → (module, feeds, output names), written by export."""
    return Case(model, phase, key, tokens, seqrt_ops,
                lambda path: export(build, seqrt_ops, path))


def _ids(rng, vocab: int, length: int):
    return rng.integers(0, vocab, size=(1, length), dtype=np.int64)


def bert_cases(quick: bool) -> List[Case]:
    vocab, dim, heads, ffn, depth = ((512, 64, 4, 128, 2) if quick else
                                     (8192, 384, 12, 1536, 6))
    cases = []
    for seq in ((32,) if quick else (128, 512)):
        def build(seq=seq):
            torch.manual_seed(0)
            module = BertEncoder(vocab, dim, heads, ffn, depth)
            rng = np.random.default_rng(0)
            return module, {"input_ids": _ids(rng, vocab, seq)}, ["hidden"]
        cases.append(module_case("bert", f"encoder seq {seq}",
                                 f"bert_l{depth}_d{dim}_v{vocab}_s{seq}", seq,
                                 False, build))
    return cases


def gpt2_cases(quick: bool) -> List[Case]:
    vocab, dim, heads, depth = (512, 64, 4, 2) if quick else (8192, 768, 12, 12)
    prompt, steps = (32, 8) if quick else (512, 64)
    cache = prompt + steps // 2  # the middle decode step
    names = [f"{kind}_{i}" for i in range(depth) for kind in ("key", "value")]

    def prefill():
        torch.manual_seed(0)
        module = GPTDecoder(vocab, dim, heads, depth, prompt=prompt)
        rng = np.random.default_rng(0)
        feeds = {"input_ids": _ids(rng, vocab, prompt),
                 "position_ids": np.arange(prompt, dtype=np.int64)[None]}
        return module, feeds, ["logits"] + [f"present_{n}" for n in names]

    def decode():
        torch.manual_seed(0)
        module = GPTDecoder(vocab, dim, heads, depth)
        rng = np.random.default_rng(0)
        feeds = {"input_ids": _ids(rng, vocab, 1),
                 "position_ids": np.array([[cache]], dtype=np.int64)}
        shape = (1, heads, cache, dim // heads)
        for n in names:
            feeds[f"past_{n}"] = rng.standard_normal(shape, dtype=np.float32)
        return module, feeds, ["logits"] + [f"present_{n}" for n in names]

    stem = f"gpt2_l{depth}_d{dim}_v{vocab}"
    return [module_case("gpt2", f"prefill {prompt}", f"{stem}_prefill{prompt}",
                        prompt, False, prefill),
            module_case("gpt2",
                        f"decode step, cache {cache} (step {steps // 2} of {steps})",
                        f"{stem}_decode{cache}", 1, False, decode)]


def _sequence_case(model: str, label: str, key: str, length: int, dim: int,
                   blocks: Callable[[], List[nn.Module]]) -> Case:
    def build():
        torch.manual_seed(0)
        module = Stack(blocks())
        rng = np.random.default_rng(0)
        x = rng.standard_normal((1, length, dim), dtype=np.float32)
        return module, {"x": x}, ["y"]
    return module_case(model, label, key, length, True, build)


def mamba_cases(quick: bool) -> List[Case]:
    dim, depth, length = (64, 2, 64) if quick else (768, 4, 2048)
    return [_sequence_case(
        "mamba", f"{depth}×MambaBlock d{dim}, L {length}",
        f"mamba_l{depth}_d{dim}_L{length}", length, dim,
        lambda: [layers.MambaBlock(dim) for _ in range(depth)])]


def retnet_cases(quick: bool) -> List[Case]:
    dim, heads, depth, length = (64, 4, 2, 64) if quick else (512, 8, 4, 2048)
    return [_sequence_case(
        "retnet", f"{depth}×RetNetLayer d{dim} h{heads}, T {length}",
        f"retnet_l{depth}_d{dim}_h{heads}_T{length}", length, dim,
        lambda: [layers.RetNetLayer(dim, heads, 2 * dim) for _ in range(depth)])]


# MemoryBranch's memory diverges to NaN after ~40 tokens (in PyTorch eager
# as in both engines) at its default initial weights with O(1) inputs, and a
# TitansMAG's output is O(1): so each layer of the stack reads
# 0.1·RMSNorm(x), and its memory starts from half the default W1, W2.
TITANS_INPUT_RMS = 0.1
TITANS_MEMORY_INIT = 0.5


def _titans_layer(dim: int, heads: int, length: int) -> List[nn.Module]:
    norm = layers.RMSNorm(dim)
    nn.init.constant_(norm.weight, TITANS_INPUT_RMS)
    block = layers.TitansMAG(dim, heads, length)
    with torch.no_grad():
        block.memory.W1.mul_(TITANS_MEMORY_INIT)
        block.memory.W2.mul_(TITANS_MEMORY_INIT)
    return [norm, block]


def titans_cases(quick: bool) -> List[Case]:
    dim, heads, depth, length = (64, 4, 1, 32) if quick else (256, 4, 2, 1024)
    label = (f"{depth}×TitansMAG d{dim} h{heads}, T {length} "
             f"({TITANS_INPUT_RMS}·RMSNorm in, W×{TITANS_MEMORY_INIT})")
    key = (f"titans_l{depth}_d{dim}_h{heads}_T{length}"
           f"_rms{TITANS_INPUT_RMS}_w{TITANS_MEMORY_INIT}")
    return [_sequence_case(
        "titans", label, key, length, dim,
        lambda: [m for _ in range(depth) for m in _titans_layer(dim, heads, length)])]


MODELS = {"bert": bert_cases, "gpt2": gpt2_cases, "mamba": mamba_cases,
          "retnet": retnet_cases, "titans": titans_cases}


def export(build: Build, seqrt_ops: bool, path) -> Dict[str, np.ndarray]:
    """Writes build()'s module as .onnx to path; returns the feeds."""
    module, feeds, outputs = build()
    module.eval()
    args = tuple(torch.from_numpy(v) for v in feeds.values())
    with torch.no_grad():
        if seqrt_ops:
            sx.export(module, args, str(path), input_names=list(feeds),
                      output_names=outputs, opset_version=OPSET)
        else:
            torch.onnx.export(module, args, str(path), input_names=list(feeds),
                              output_names=outputs, opset_version=OPSET,
                              do_constant_folding=True)
    return feeds

