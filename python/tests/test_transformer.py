"""A Transformer encoder layer (standard ONNX ops only) and a GPT-style
decoder block with a KV cache (seqrt::Attention; prefill and decode graphs)."""

import numpy as np
import torch

from seqrt.export import layers
from conftest import ATOL, RTOL, cross_check

DIM, HEADS = 32, 4


class OneInput(torch.nn.Module):
    """forward(x) only: torch 2.x's TorchScript exporter turns the default
    of the layer's bool argument `is_causal` into a tensor, which its
    attention then refuses."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x):
        return self.layer(x)


def test_encoder_layer(backend, tmp_path):
    layer = torch.nn.TransformerEncoderLayer(DIM, HEADS, dim_feedforward=64,
                                             dropout=0.0, batch_first=True)
    cross_check(OneInput(layer), {"x": torch.randn(2, 10, DIM)}, ["y"], tmp_path,
                backend)


class Decode(torch.nn.Module):
    """The decode graph: one new token and the cache."""

    def __init__(self, block):
        super().__init__()
        self.block = block

    def forward(self, x, past_key, past_value):
        return self.block(x, past_key, past_value)


def test_gpt_block_prefill_then_decode(backend, tmp_path):
    """Prefill T tokens, then decode token T+1 from the cache; both graphs
    equal onnxruntime and eager, and the decoded token equals the last
    position of running all T+1 tokens at once."""
    block = layers.GPTBlock(DIM, HEADS, kv_heads=2).eval()
    tokens = torch.randn(2, 9, DIM)
    prompt, new = tokens[:, :8], tokens[:, 8:]
    names = ["y", "present_key", "present_value"]
    (tmp_path / "prefill").mkdir()
    prefill = cross_check(block, {"x": prompt}, names, tmp_path / "prefill",
                          backend, ["Attention"])
    decode_inputs = {"x": new,
                     "past_key": torch.from_numpy(prefill["present_key"]),
                     "past_value": torch.from_numpy(prefill["present_value"])}
    (tmp_path / "decode").mkdir()
    decoded = cross_check(Decode(block), decode_inputs, names, tmp_path / "decode",
                          backend, ["Attention"])
    with torch.no_grad():
        whole = block(tokens)[0][:, 8:].numpy()
    np.testing.assert_allclose(decoded["y"], whole, rtol=RTOL, atol=ATOL)
    assert decoded["present_key"].shape == (2, 2, 9, DIM // HEADS)
