"""Session(..., backend_options={...}): what the backend is opened with.
Each key is checked (a key no backend takes, a malformed value, a key the
chosen backend does not take: errors naming the key), a host backend has
only device 0, and on Vulkan fp16 weights asked for by option give what
SEQRT_VULKAN_FP16_WEIGHTS=1 gives, which the variable overrides."""

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import seqrt


@pytest.fixture(scope="module")
def matmul_model(tmp_path_factory):
    """y = x @ w with weights that fp16 storage rounds."""
    w = np.random.default_rng(3).uniform(-0.3, 0.3, (40, 24)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 40])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 24])],
        [onnx.numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path_factory.mktemp("options") / "matmul.onnx"
    onnx.save(model, str(path))
    return path


FEEDS = {"x": np.random.default_rng(4).standard_normal((4, 40)).astype(np.float32)}


def test_host_backends_have_device_zero_only(matmul_model):
    for backend in ("reference", "cpu"):
        session = seqrt.Session(matmul_model, backend=backend,
                                backend_options={"device": 0})
        assert session.run(None, FEEDS)[0].shape == (4, 24)
        with pytest.raises(seqrt.UnsupportedError, match="device index 1"):
            seqrt.Session(matmul_model, backend=backend,
                          backend_options={"device": 1})


def test_bad_keys_and_values_are_named(matmul_model):
    with pytest.raises(seqrt.InvalidArgumentError,
                       match="cpu backend: no option 'fp16_weights'"):
        seqrt.Session(matmul_model, backend="cpu",
                      backend_options={"fp16_weights": True})
    with pytest.raises(seqrt.InvalidArgumentError,
                       match="no backend of this build takes option 'colour'"):
        seqrt.Session(matmul_model, backend="cpu",
                      backend_options={"colour": "blue"})
    with pytest.raises(ValueError, match="device must be a device index"):
        seqrt.Session(matmul_model, backend="cpu",
                      backend_options={"device": "first"})
    with pytest.raises(TypeError, match="'device' must be a bool, int or str"):
        seqrt.Session(matmul_model, backend="cpu",
                      backend_options={"device": 1.5})
    with pytest.raises(TypeError, match="dict"):
        seqrt.Session(matmul_model, backend="cpu",
                      backend_options=[("device", 0)])


def vulkan_y(model, monkeypatch, variable=None, **options):
    if variable is None:
        monkeypatch.delenv("SEQRT_VULKAN_FP16_WEIGHTS", raising=False)
    else:
        monkeypatch.setenv("SEQRT_VULKAN_FP16_WEIGHTS", variable)
    session = seqrt.Session(model, backend="vulkan", backend_options=options)
    return session.run(None, FEEDS)[0]


@pytest.mark.skipif("vulkan" not in seqrt.available_backends(),
                    reason="this build has no Vulkan backend")
def test_vulkan_fp16_weights_by_option_match_the_variable(matmul_model,
                                                          monkeypatch):
    monkeypatch.delenv("SEQRT_VULKAN_DEVICE", raising=False)
    monkeypatch.setenv("VK_DRIVER_FILES",
                       os.environ.get("VK_DRIVER_FILES",
                                      "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"))
    try:
        fp32 = vulkan_y(matmul_model, monkeypatch)
    except seqrt.UnsupportedError as error:
        pytest.skip(f"no Vulkan device: {error}")
    by_option = vulkan_y(matmul_model, monkeypatch, fp16_weights=True)
    by_variable = vulkan_y(matmul_model, monkeypatch, variable="1")
    np.testing.assert_array_equal(by_option, by_variable)
    assert not np.array_equal(by_option, fp32)  # the option took effect
    overridden = vulkan_y(matmul_model, monkeypatch, variable="0",
                          fp16_weights=True)
    np.testing.assert_array_equal(overridden, fp32)
    with pytest.raises(seqrt.NotFoundError, match="'99'.*devices: 0: "):
        vulkan_y(matmul_model, monkeypatch, device=99)
