"""onnxruntime's own int4/int8 weight quantizer (MatMulNBitsQuantizer) writes
com.microsoft MatMulNBits; seqrt imports it as a quantized seqrt::Linear and
must match onnxruntime on the same quantized weights within 1e-3 relative.

K = 100 is no multiple of the block (32): the last block is short, and the
4-bit zero points of 4 blocks pack into 2 bytes a row.
"""

import os
import pathlib
import subprocess

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization.matmul_nbits_quantizer import (
    DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer)

import seqrt

M, K, N = 3, 100, 40
REPO = pathlib.Path(__file__).resolve().parents[2]
CLI = os.environ.get("SEQRT_CLI", str(REPO / "build/dev/tools/seqrt"))


def matmul_model(seed: int) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((K, N)) * 0.1).astype(np.float32)
    b = (rng.standard_normal(N) * 0.1).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["xw"]),
         helper.make_node("Add", ["xw", "b"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [M, K])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [M, N])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    # IR 10: what this onnxruntime reads (onnx writes a newer one).
    return helper.make_model(graph, ir_version=10,
                             opset_imports=[helper.make_opsetid("", 21)])


def quantized(bits: int, symmetric: bool,
              accuracy_level=None) -> onnx.ModelProto:
    config = DefaultWeightOnlyQuantConfig(block_size=32,
                                          is_symmetric=symmetric, bits=bits,
                                          accuracy_level=accuracy_level)
    quantizer = MatMulNBitsQuantizer(matmul_model(bits), algo_config=config)
    quantizer.process()
    return quantizer.model.model


@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("symmetric", [True, False],
                         ids=["symmetric", "asymmetric"])
def test_matches_onnxruntime(tmp_path, bits, symmetric):
    model = quantized(bits, symmetric)
    ops = [node.op_type for node in model.graph.node]
    assert "MatMulNBits" in ops, ops
    has_zero_points = any(init.name.endswith("_zero_points")
                          for init in model.graph.initializer)
    assert has_zero_points == (not symmetric)
    path = tmp_path / "q.onnx"
    onnx.save(model, str(path))

    x = np.random.default_rng(7).uniform(-1, 1, (M, K)).astype(np.float32)
    session = ort.InferenceSession(str(path),
                                   providers=["CPUExecutionProvider"])
    want, = session.run(None, {"x": x})
    got, = seqrt.Session(str(path), backend="cpu").run(None, {"x": x})
    got = np.asarray(got)
    assert got.shape == want.shape
    error = np.max(np.abs(got - want)) / np.max(np.abs(want))
    assert error <= 1e-3, f"relative error {error}"
    # And against the fp32 model: quantizing must not be a no-op or garbage.
    fp32_path = tmp_path / "fp32.onnx"
    onnx.save(matmul_model(bits), str(fp32_path))
    exact, = ort.InferenceSession(
        str(fp32_path), providers=["CPUExecutionProvider"]).run(None,
                                                                 {"x": x})
    drift = np.max(np.abs(got - exact)) / np.max(np.abs(exact))
    assert 0 < drift < (0.1 if bits == 4 else 0.01), drift


@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("symmetric", [True, False],
                         ids=["symmetric", "asymmetric"])
def test_accuracy_level_4_computes_with_int8_activations(tmp_path, bits,
                                                         symmetric):
    """accuracy_level 4 asks for int8 compute: onnxruntime then quantizes
    each block of X to int8, and seqrt does the same (activation_bits 8),
    so the two agree far closer than either does with f32 activations."""
    path = tmp_path / "acc4.onnx"
    onnx.save(quantized(bits, symmetric, accuracy_level=4), str(path))
    levels = [a.i for node in onnx.load(str(path)).graph.node
              for a in node.attribute if a.name == "accuracy_level"]
    assert levels == [4], levels
    x = np.random.default_rng(8).uniform(-1, 1, (M, K)).astype(np.float32)
    got, want = run_both(path, x)
    scale = np.max(np.abs(want))
    error = np.max(np.abs(got - want)) / scale
    assert error <= 1e-5, f"relative error {error}"
    f32_path = tmp_path / "acc0.onnx"
    onnx.save(quantized(bits, symmetric), str(f32_path))
    f32_activations, = seqrt.Session(str(f32_path), backend="cpu").run(
        None, {"x": x})
    drift = np.max(np.abs(got - np.asarray(f32_activations))) / scale
    assert 10 * error < drift < 0.02, (error, drift)


def run_both(path, x):
    """onnxruntime's and seqrt's (cpu) outputs for the file at `path`."""
    want, = ort.InferenceSession(
        str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    got, = seqrt.Session(str(path), backend="cpu").run(None, {"x": x})
    return np.asarray(got), want


@pytest.mark.parametrize("symmetric", [True, False],
                         ids=["symmetric", "asymmetric"])
def test_qdq_int4_blocks_fold_into_a_quantized_linear(tmp_path, symmetric):
    """The same quantizer in QDQ form writes DequantizeLinear (int4 or uint4
    codes, blocks of 32 along K) -> MatMul; fuse_dequantize_linear makes
    one quantized Linear of it, never the f32 weight (its C++ test checks
    the rewrite; here the outputs). seqrt must equal the exact product with
    the dequantised weight. onnxruntime rewrites the pair into its own
    MatMulNBits kernel, which computes with 8-bit activations here, so it
    is only checked to 1e-2."""
    from onnx import numpy_helper
    from onnxruntime.quantization import QuantFormat
    config = DefaultWeightOnlyQuantConfig(block_size=32,
                                          is_symmetric=symmetric, bits=4,
                                          quant_format=QuantFormat.QDQ)
    quantizer = MatMulNBitsQuantizer(matmul_model(5), algo_config=config)
    quantizer.process()
    model = quantizer.model.model
    dq = [node for node in model.graph.node
          if node.op_type == "DequantizeLinear"]
    assert len(dq) == 1, [node.op_type for node in model.graph.node]
    path = tmp_path / "qdq.onnx"
    onnx.save(model, str(path))
    x = np.random.default_rng(3).uniform(-1, 1, (M, K)).astype(np.float32)
    got, from_ort = run_both(path, x)
    # The exact product: codes minus zero points, times the block scales.
    inits = {i.name: numpy_helper.to_array(i).astype(np.float64)
             for i in model.graph.initializer}
    codes, scales = inits[dq[0].input[0]], inits[dq[0].input[1]]
    zeros = inits[dq[0].input[2]] if len(dq[0].input) > 2 else 0
    weight = ((codes - np.repeat(zeros, 32, axis=0)[:K]
               if np.ndim(zeros) else codes)
              * np.repeat(scales, 32, axis=0)[:K])
    exact = x.astype(np.float64) @ weight + inits["b"]
    error = np.max(np.abs(got - exact)) / np.max(np.abs(exact))
    assert error <= 1e-5, f"relative error {error}"
    drift = np.max(np.abs(from_ort - exact)) / np.max(np.abs(exact))
    assert drift <= 1e-2, f"onnxruntime's relative error {drift}"


def test_dynamic_int8_quantization_matches_onnxruntime(tmp_path):
    """quantize_dynamic writes DynamicQuantizeLinear -> MatMulInteger ->
    Cast -> Mul (int8 weights, uint8 activations quantized per run)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    fp32 = tmp_path / "fp32.onnx"
    onnx.save(matmul_model(6), str(fp32))
    path = tmp_path / "dynamic.onnx"
    quantize_dynamic(str(fp32), str(path), weight_type=QuantType.QInt8)
    ops = [node.op_type for node in onnx.load(str(path)).graph.node]
    assert "MatMulInteger" in ops and "DynamicQuantizeLinear" in ops, ops
    x = np.random.default_rng(4).uniform(-1, 1, (M, K)).astype(np.float32)
    got, want = run_both(path, x)
    error = np.max(np.abs(got - want)) / np.max(np.abs(want))
    assert error <= 1e-3, f"relative error {error}"


def test_seqrt_quantize_int8_activations(tmp_path):
    """`seqrt quantize --activations int8` writes Linears that quantize X
    per block: close to the f32 model, and not the weight-only result."""
    fp32 = tmp_path / "fp32.onnx"
    onnx.save(matmul_model(9), str(fp32))
    x = np.random.default_rng(9).uniform(-1, 1, (M, K)).astype(np.float32)
    outputs = {}
    for activations in ("f32", "int8"):
        out = tmp_path / f"{activations}.seqrt"
        subprocess.run([CLI, "quantize", str(fp32), str(out), "--weights",
                        "int8", "--output-layer", "int8", "--activations",
                        activations], check=True, capture_output=True)
        outputs[activations], = seqrt.Session(str(out)).run(None, {"x": x})
    exact, = seqrt.Session(str(fp32)).run(None, {"x": x})
    scale = np.max(np.abs(exact))
    assert np.max(np.abs(outputs["int8"] - exact)) / scale < 0.02
    assert np.max(np.abs(outputs["int8"] - outputs["f32"])) > 0
    refused = subprocess.run([CLI, "quantize", str(fp32),
                              str(tmp_path / "bad.seqrt"), "--activations",
                              "int4"], capture_output=True, text=True)
    assert refused.returncode != 0
    assert "--activations 'int4': expected f32 or int8" in refused.stderr
