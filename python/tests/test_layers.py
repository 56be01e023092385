"""Ready layers: eager PyTorch == onnxruntime (ONNX functions) == seqrt."""

import pytest
import torch

from seqrt.export import layers
from conftest import cross_check, expect_cpu_gap

# The CPU backend's standard-op kernels still missing in these layers.
GAP_NORM_CONV = "CPU backend: no ReduceMean (RMSNorm) or grouped Conv kernel yet"
GAP_ROTATION = ("CPU backend: no Sin/Cos (rotation) or ReduceMean kernel yet, "
                "no i64 Mul (shape arithmetic)")
GAP_TITANS = ("CPU backend: no ReduceMean (norms), Equal/Where or i64 Mul "
              "(the exporter's Expand shape arithmetic) kernel yet")

DIM = 32


def x_input(length=16, batch=2):
    return {"x": torch.randn(batch, length, DIM)}


def test_mamba_block(backend, tmp_path, request):
    expect_cpu_gap(request, backend, GAP_NORM_CONV)
    block = layers.MambaBlock(DIM, d_state=8)
    cross_check(block, x_input(), ["y"], tmp_path, backend, ["SelectiveScan"])


def test_mamba2_block(backend, tmp_path, request):
    expect_cpu_gap(request, backend, GAP_NORM_CONV)
    block = layers.Mamba2Block(DIM, d_state=8, head_dim=8, groups=2)
    cross_check(block, x_input(), ["y"], tmp_path, backend, ["SSD"])


def test_retnet_layer(backend, tmp_path, request):
    expect_cpu_gap(request, backend, GAP_ROTATION)
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


def test_titans_mac(backend, tmp_path, request):
    expect_cpu_gap(request, backend, GAP_TITANS)
    block = layers.TitansMAC(DIM, heads=2, segment=8, persistent=4)
    cross_check(block, x_input(length=24), ["y"], tmp_path, backend,
                ["NeuralMemory", "Attention"])


def test_titans_mag(backend, tmp_path, request):
    expect_cpu_gap(request, backend, GAP_TITANS)
    block = layers.TitansMAG(DIM, heads=2, length=16, window=8)
    cross_check(block, x_input(), ["y"], tmp_path, backend,
                ["NeuralMemory", "Attention"])


def test_titans_mal(backend, tmp_path, request):
    expect_cpu_gap(request, backend, GAP_TITANS)
    block = layers.TitansMAL(DIM, heads=2, window=8)
    cross_check(block, x_input(), ["y"], tmp_path, backend,
                ["NeuralMemory", "Attention"])


def test_hybrid_stack(backend, tmp_path, request):
    expect_cpu_gap(request, backend, GAP_NORM_CONV)
    stack = layers.HybridStack(DIM, layers=4, heads=4, attention_every=2, d_state=8)
    cross_check(stack, x_input(), ["y"], tmp_path, backend,
                ["SelectiveScan", "Attention"])
