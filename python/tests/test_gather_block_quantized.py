"""Quantized embedding tables: onnxruntime's MatMulNBitsQuantizer with
"Gather" among its ops writes com.microsoft GatherBlockQuantized (int4
codes when symmetric, uint4 with zero points otherwise); onnxruntime-genai
writes the packed-uint8 form, built here by hand. seqrt imports each as
seqrt::QuantizedGather and must give onnxruntime's rows exactly (each value
is one product of a code and a scale). `seqrt quantize --embedding` makes
the same op from an f32 table.

D = 70 is no multiple of the block (32): the last block is short.
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

V, D = 50, 70
REPO = pathlib.Path(__file__).resolve().parents[2]
CLI = os.environ.get("SEQRT_CLI", str(REPO / "build/dev/tools/seqrt"))
IDS = np.array([[0, 7, 49, 7], [3, 1, 2, 48]], np.int64)


def table():
    return np.random.default_rng(0).standard_normal((V, D)).astype(np.float32)


def save(path, nodes, initializers, domains=()):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("ids", TensorProto.INT64,
                                                   ["b", "s"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       ["b", "s", D])], initializers)
    opsets = [helper.make_opsetid("", 21)] + [
        helper.make_opsetid(d, 1) for d in domains]
    onnx.save(helper.make_model(graph, ir_version=10, opset_imports=opsets),
              str(path))
    return path


def f32_model(path):
    return save(path, [helper.make_node("Gather", ["E", "ids"], ["y"])],
                [numpy_helper.from_array(table(), "E")])


def both(path):
    want, = ort.InferenceSession(str(path), providers=[
        "CPUExecutionProvider"]).run(["y"], {"ids": IDS})
    got, = seqrt.Session(str(path)).run(["y"], {"ids": IDS})
    return got, want


@pytest.mark.parametrize("symmetric", [True, False],
                         ids=["int4", "uint4_zero_points"])
def test_onnxruntime_quantizer_file(tmp_path, symmetric):
    config = DefaultWeightOnlyQuantConfig(
        block_size=32, is_symmetric=symmetric, bits=4,
        op_types_to_quantize=("Gather",), quant_axes=(("Gather", 1),))
    quantizer = MatMulNBitsQuantizer(onnx.load(str(f32_model(
        tmp_path / "f32.onnx"))), algo_config=config)
    quantizer.process()
    path = tmp_path / "q.onnx"
    onnx.save(quantizer.model.model, str(path))
    assert [n.op_type for n in onnx.load(str(path)).graph.node] == [
        "GatherBlockQuantized"]
    got, want = both(path)
    np.testing.assert_array_equal(got, want)
    assert np.abs(got - table()[IDS]).max() < 0.5  # 4-bit codes of N(0, 1)


@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("zero_points", [True, False],
                         ids=["zero_points", "default_zero_point"])
def test_packed_uint8_form(tmp_path, bits, zero_points):
    rng = np.random.default_rng(bits)
    blocks = (D + 31) // 32
    codes = rng.integers(0, 1 << bits, (V, D), dtype=np.uint8)
    zps = rng.integers(0, 1 << bits, (V, blocks), dtype=np.uint8)

    def packed(values):  # two 4-bit codes a byte, low nibble first
        if bits == 8:
            return values
        values = np.pad(values, ((0, 0), (0, values.shape[1] % 2)))
        return (values[:, 0::2] | (values[:, 1::2] << 4)).astype(np.uint8)

    inputs = ["E_q", "ids", "E_scales"] + (["E_zp"] if zero_points else [])
    initializers = [
        numpy_helper.from_array(packed(codes), "E_q"),
        numpy_helper.from_array(
            rng.uniform(0.01, 0.1, (V, blocks)).astype(np.float32),
            "E_scales")]
    if zero_points:
        initializers.append(numpy_helper.from_array(packed(zps), "E_zp"))
    node = helper.make_node("GatherBlockQuantized", inputs, ["y"],
                            domain="com.microsoft", bits=bits, block_size=32,
                            gather_axis=0, quantize_axis=1)
    path = save(tmp_path / "u8.onnx", [node], initializers, ["com.microsoft"])
    got, want = both(path)
    np.testing.assert_array_equal(got, want)


def test_seqrt_quantize_embedding(tmp_path):
    f32 = f32_model(tmp_path / "f32.onnx")
    out = tmp_path / "q.seqrt"
    report = subprocess.run([CLI, "quantize", str(f32), str(out), "--weights",
                             "int4", "--embedding", "int4", "--symmetric"],
                            check=True, capture_output=True, text=True).stdout
    assert "int4" in report
    session = seqrt.Session(str(out))
    got, = session.run(["y"], {"ids": IDS})
    # Symmetric 4 bits: within half a step of 1/7 of each block's largest
    # magnitude.
    assert np.abs(got - table()[IDS]).max() <= np.abs(table()).max() / 14 + 1e-6
    refused = subprocess.run([CLI, "quantize", str(f32), str(out),
                              "--embedding", "int2"], capture_output=True,
                             text=True)
    assert refused.returncode != 0
    assert "--embedding 'int2': expected keep, int8 or int4" in refused.stderr
