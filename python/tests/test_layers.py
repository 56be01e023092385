"""Ready layers: eager PyTorch == onnxruntime (ONNX functions) == seqrt."""

import pytest
import torch

from seqrt.export import layers
from conftest import cross_check


DIM = 32


def x_input(length=16, batch=2):
    return {"x": torch.randn(batch, length, DIM)}


def test_mamba_block(backend, tmp_path):
    block = layers.MambaBlock(DIM, d_state=8)
    cross_check(block, x_input(), ["y"], tmp_path, backend, ["SelectiveScan"])


def test_mamba2_block(backend, tmp_path):
    block = layers.Mamba2Block(DIM, d_state=8, head_dim=8, groups=2)
    cross_check(block, x_input(), ["y"], tmp_path, backend, ["SSD"])


def test_retnet_layer(backend, tmp_path):
    layer = layers.RetNetLayer(DIM, heads=4, ffn_dim=64)
    cross_check(layer, x_input(), ["y"], tmp_path, backend, ["Retention"])


@pytest.mark.parametrize("method", ["euler", "rk2", "rk2_gated", "rk4"])
def test_rk_encoder_layer(method, backend, tmp_path):
    layer = layers.RKEncoderLayer(DIM, heads=4, ffn_dim=64, method=method)
    if method == "rk2_gated":
        with torch.no_grad():
            layer.gate_weight.normal_(0, 0.2)
            layer.gate_bias.fill_(0.3)
    cross_check(layer, x_input(length=8), ["y"], tmp_path, backend, ["RungeKutta"])


def test_titans_mac(backend, tmp_path):
    block = layers.TitansMAC(DIM, heads=2, segment=8, persistent=4)
    cross_check(block, x_input(length=24), ["y"], tmp_path, backend,
                ["NeuralMemory", "Attention"])


def test_titans_mag(backend, tmp_path):
    block = layers.TitansMAG(DIM, heads=2, length=16, window=8)
    cross_check(block, x_input(), ["y"], tmp_path, backend,
                ["NeuralMemory", "Attention"])


def test_titans_mal(backend, tmp_path):
    block = layers.TitansMAL(DIM, heads=2, window=8)
    cross_check(block, x_input(), ["y"], tmp_path, backend,
                ["NeuralMemory", "Attention"])


def test_hybrid_stack(backend, tmp_path):
    stack = layers.HybridStack(DIM, layers=4, heads=4, attention_every=2, d_state=8)
    cross_check(stack, x_input(), ["y"], tmp_path, backend,
                ["SelectiveScan", "Attention"])
