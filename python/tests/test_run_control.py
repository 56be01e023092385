"""Deadlines and cancellation from Python: run(..., timeout=) raises
DeadlineExceededError, session.cancel() from another thread stops a run in
flight with CancelledError, and the session runs correctly afterwards. The
model is a Loop whose trip count comes from an input (built with onnx's
helper, so no PyTorch is needed)."""

import threading
import time

import numpy as np
import pytest
from onnx import TensorProto, helper

import seqrt

HUGE = 1 << 62


@pytest.fixture(scope="module")
def loop_model(tmp_path_factory):
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["v", "one"], ["v_next"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_next", TensorProto.FLOAT, [2])],
        initializer=[helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["m", "", "v0"], ["v_final"], name="loop0",
                          body=body)],
        "loop",
        [helper.make_tensor_value_info("m", TensorProto.INT64, []),
         helper.make_tensor_value_info("v0", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("v_final", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path_factory.mktemp("loop") / "loop.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def feeds(m):
    return {"m": np.array(m, np.int64), "v0": np.zeros(2, np.float32)}


def check_runs_correctly(session):
    v, = session.run(None, feeds(3))
    np.testing.assert_array_equal(v, [3, 3])


@pytest.mark.parametrize("backend", ["reference", "cpu"])
def test_timeout_raises_deadline_exceeded(loop_model, backend):
    session = seqrt.Session(loop_model, backend=backend)
    start = time.monotonic()
    with pytest.raises(seqrt.DeadlineExceededError,
                       match="deadline of 200 ms exceeded"):
        session.run(None, feeds(HUGE), timeout=0.2)
    assert time.monotonic() - start < 10
    assert issubclass(seqrt.DeadlineExceededError, TimeoutError)
    check_runs_correctly(session)
    with pytest.raises(seqrt.InvalidArgumentError, match="timeout"):
        session.run(None, feeds(3), timeout=0)


@pytest.mark.parametrize("backend", ["reference", "cpu"])
def test_cancel_from_another_thread(loop_model, backend):
    session = seqrt.Session(loop_model, backend=backend)
    cancelled_at = []

    def cancel_soon():
        time.sleep(0.3)
        cancelled_at.append(time.monotonic())
        session.cancel()

    canceller = threading.Thread(target=cancel_soon)
    canceller.start()
    with pytest.raises(seqrt.CancelledError, match="run cancelled"):
        session.run(None, feeds(HUGE))
    returned = time.monotonic()
    canceller.join()
    assert returned - cancelled_at[0] < 5
    check_runs_correctly(session)
