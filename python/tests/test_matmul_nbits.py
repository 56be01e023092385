"""onnxruntime's own int4/int8 weight quantizer (MatMulNBitsQuantizer) writes
com.microsoft MatMulNBits; seqrt imports it as a quantized seqrt::Linear and
must match onnxruntime on the same quantized weights within 1e-3 relative.

K = 100 is no multiple of the block (32): the last block is short, and the
4-bit zero points of 4 blocks pack into 2 bytes a row.
"""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization.matmul_nbits_quantizer import (
    DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer)

import seqrt

M, K, N = 3, 100, 40


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


def quantized(bits: int, symmetric: bool) -> onnx.ModelProto:
    config = DefaultWeightOnlyQuantConfig(block_size=32,
                                          is_symmetric=symmetric, bits=bits)
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
