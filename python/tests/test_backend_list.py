"""Session(..., backend=["vulkan", "cpu"]): the graph split between backends,
each node on the first that runs it (runtime/multi_backend.h). A CumSum whose
axis is fed at run time is one the Vulkan backend refuses (it records every
parameter in advance), so it runs on the CPU between two Vulkan segments;
the result equals the CPU backend's. Bad lists are errors naming the fault."""

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import seqrt


@pytest.fixture(scope="module")
def island_model(tmp_path_factory):
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("CumSum", ["r", "axis"], ["c"]),
             helper.make_node("Neg", ["c"], ["y"])]
    graph = helper.make_graph(
        nodes, "island",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5]),
         helper.make_tensor_value_info("axis", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path_factory.mktemp("backend_list") / "island.onnx"
    onnx.save(model, str(path))
    return path


FEEDS = {"x": np.random.default_rng(5).standard_normal((3, 5)).astype(np.float32),
         "axis": np.array(1, dtype=np.int64)}


def test_vulkan_then_cpu_equals_cpu(island_model):
    if "vulkan" not in seqrt.available_backends():
        pytest.skip("the Vulkan backend is not built")
    try:
        mixed = seqrt.Session(island_model, backend=["vulkan", "cpu"])
    except seqrt.UnsupportedError as error:
        # The named reason: no Vulkan device here (never where CI requires one).
        if "vulkan" in os.environ.get("SEQRT_REQUIRE_BACKENDS", "").split(","):
            raise
        pytest.skip(f"no Vulkan device: {error}")
    assert mixed.backend == "vulkan,cpu"
    want = seqrt.Session(island_model, backend="cpu").run(None, FEEDS)[0]
    np.testing.assert_allclose(mixed.run(None, FEEDS)[0], want, rtol=1e-6)


def test_bad_backend_lists_are_named(island_model):
    with pytest.raises(seqrt.InvalidArgumentError, match="unknown backend 'gpu'"):
        seqrt.Session(island_model, backend=["gpu", "cpu"])
    with pytest.raises(seqrt.InvalidArgumentError, match="names 'cpu' twice"):
        seqrt.Session(island_model, backend=["cpu", "cpu"])
    with pytest.raises(seqrt.InvalidArgumentError, match="empty name"):
        seqrt.Session(island_model, backend=[])
    with pytest.raises(seqrt.InvalidArgumentError, match="must be str"):
        seqrt.Session(island_model, backend=["cpu", 3])
