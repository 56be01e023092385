"""seqrt.serve's parts that need no Ray cluster: the request codec, the
batcher, the session table, the sampler, and the Stream snapshot arrays the
server hands to clients. The served whole: tests/zoo/test_serve.py."""

import io
import json
import pathlib

import numpy as np
import pytest

pytest.importorskip("ray.serve", reason="Ray Serve is not installed")

import seqrt  # noqa: E402
from seqrt.serve import batching, codec, generation, sessions  # noqa: E402

DEMO = pathlib.Path(__file__).resolve().parents[2] / "samples/demo/austen.seqrt"

SPECS = {
    "ids": codec.InputSpec("ids", np.dtype(np.int64), ["batch", "seq"]),
    "x": codec.InputSpec("x", np.dtype(np.float32), ["batch", 4]),
}


def json_body(inputs):
    return json.dumps({"inputs": inputs}).encode()


def test_json_lists_are_cast_to_the_input_dtype_when_nothing_is_lost():
    feeds = codec.feeds_from_body(
        json_body({"ids": [[1, 2]], "x": [[1, 2, 3, 4.5]]}), "application/json",
        SPECS)
    assert feeds["ids"].dtype == np.int64 and feeds["x"].dtype == np.float32
    codec.check_feeds(feeds, SPECS, "model 'm'")
    with pytest.raises(codec.RequestError, match="input 'ids' is int64, got "
                       "values of float64"):
        codec.feeds_from_body(json_body({"ids": [[1.5]]}), None, SPECS)


@pytest.mark.parametrize("inputs, message", [
    ({"nope": [1]}, "no input 'nope'; its inputs are \\['ids', 'x'\\]"),
    ({"ids": [[1, 2], [3]]}, "input 'ids' is not a rectangular array"),
    ({"ids": {"dtype": "int32", "data": [1]}}, "input 'ids' is int64, got int32"),
    ({"ids": {"dtype": "int64", "shape": [2, 2], "data": [1, 2, 3]}},
     "3 values do not make shape \\[2, 2\\]"),
    ({"ids": {"dtype": "bogus", "data": [1]}}, "unknown dtype 'bogus'"),
])
def test_bad_json_inputs_name_what_is_wrong(inputs, message):
    with pytest.raises(codec.RequestError, match=message) as error:
        codec.feeds_from_body(json_body(inputs), "application/json", SPECS)
    assert error.value.status == 400


def test_bodies_that_are_not_what_they_claim():
    with pytest.raises(codec.RequestError, match="not JSON"):
        codec.feeds_from_body(b"{", "application/json", SPECS)
    with pytest.raises(codec.RequestError, match="not a .npy array"):
        codec.feeds_from_body(b"junk", codec.NPY, SPECS, "ids")
    with pytest.raises(codec.RequestError, match="name it with \\?input=NAME"):
        codec.feeds_from_body(codec.npy_bytes(np.zeros(2)), codec.NPY, SPECS)
    with pytest.raises(codec.RequestError) as error:
        codec.feeds_from_body(b"a,b", "text/csv", SPECS)
    assert error.value.status == 415


def test_npy_and_npz_bodies_keep_their_dtype_for_the_check():
    ids = np.array([[3, 4]], np.int64)
    feeds = codec.feeds_from_body(codec.npy_bytes(ids), codec.NPY, SPECS, "ids")
    np.testing.assert_array_equal(feeds["ids"], ids)
    body = codec.npz_bytes({"ids": ids.astype(np.int32),
                            "x": np.zeros((1, 4), np.float32)})
    feeds = codec.feeds_from_body(body, codec.NPZ, SPECS)
    with pytest.raises(codec.RequestError, match="input 'ids' of model 'm' is "
                       "int64, got int32"):
        codec.check_feeds(feeds, SPECS, "model 'm'")


@pytest.mark.parametrize("feeds, message", [
    ({"ids": np.zeros((1,), np.int64), "x": np.zeros((1, 4), np.float32)},
     "has shape \\[batch, seq\\], got \\[1\\]"),
    ({"ids": np.zeros((1, 2), np.int64), "x": np.zeros((1, 5), np.float32)},
     "has shape \\[batch, 4\\], got \\[1, 5\\] \\(axis 1\\)"),
    ({"ids": np.zeros((1, 2), np.int64)}, "needs input\\(s\\) \\['x'\\]"),
])
def test_check_feeds_against_the_model(feeds, message):
    with pytest.raises(codec.RequestError, match=message):
        codec.check_feeds(feeds, SPECS, "model 'm'")


def doubled(feeds):
    """A stand-in model: row-wise, so stacking must not change a row."""
    if feeds["x"].shape[1] == 3:
        raise ValueError("three columns are refused")
    return {"y": feeds["x"] * 2, "n": feeds["x"].sum(axis=1)}


def test_batched_runs_split_back_as_runs_of_their_own():
    rng = np.random.default_rng(0)
    requests = [{"x": rng.standard_normal((rows, cols)).astype(np.float32)}
                for rows, cols in [(1, 4), (2, 4), (1, 5), (3, 4), (2, 5)]]
    calls = []

    def run(feeds):
        calls.append(feeds["x"].shape)
        return doubled(feeds)

    results = batching.run_batched(run, requests)
    assert sorted(calls) == [(3, 5), (6, 4)]  # one run per shape group
    for feeds, (outputs, shared) in zip(requests, results):
        expected = doubled(feeds)
        for name in expected:
            np.testing.assert_array_equal(outputs[name], expected[name])
        assert shared == (3 if feeds["x"].shape[1] == 4 else 2)


def test_a_bad_request_fails_alone():
    requests = [{"x": np.ones((1, 3), np.float32)},
                {"x": np.ones((2, 3), np.float32)},
                {"x": np.ones((1, 4), np.float32)},
                # rows that disagree between inputs: never stacked
                {"x": np.ones((2, 4), np.float32), "z": np.ones((1, 4))}]
    results = batching.run_batched(doubled, requests)
    assert isinstance(results[0][0], ValueError)
    assert isinstance(results[1][0], ValueError)
    np.testing.assert_array_equal(results[2][0]["y"], np.full((1, 4), 2))
    assert results[3][1] == 1 and not isinstance(results[3][0], Exception)


def test_batch_dim_of_real_models(tmp_path):
    import onnx
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", 3])])
    path = tmp_path / "relu.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), str(path))
    assert batching.batch_dim(seqrt.Session(str(path))) == "b"
    assert batching.batch_dim(seqrt.Session(str(DEMO))) is None  # stateful


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_session_table_limit_idle_timeout_and_gone_sessions():
    clock = Clock()
    table = sessions.SessionTable("r1", limit=2, idle_timeout_s=10,
                                  clock=clock)
    first = table.add("stream-1")
    assert sessions.owner_of(first) == "r1"
    table.add("stream-2")
    with pytest.raises(codec.RequestError, match="limit of 2 sessions") as e:
        table.add("stream-3")
    assert e.value.status == 429
    clock.now = 8
    assert table.get(first) == "stream-1"  # used: its idle time restarts
    clock.now = 12  # the second is idle for 12 s, the first for 4 s
    third = table.add("stream-3")
    assert len(table) == 2
    table.close(third)
    with pytest.raises(codec.RequestError, match="closed, or idle for more "
                       "than 10 s") as e:
        table.get(third)
    assert e.value.status == 404
    with pytest.raises(sessions.SessionGoneError, match="replica 'r0', which "
                       "no longer serves") as e:
        table.get("r0.abc")
    assert e.value.status == 410


def test_sampling():
    rng = np.random.default_rng(0)
    logits = np.array([0.1, 3.0, 2.9, -1.0], np.float32)
    assert generation.sample(logits, 0, 0, rng) == 1
    assert generation.sample(logits, 1.0, 1, rng) == 1  # top-1 is greedy
    drawn = {generation.sample(logits, 1.0, 2, rng) for _ in range(200)}
    assert drawn == {1, 2}
    with pytest.raises(codec.RequestError, match="max_tokens must be an "
                       "integer in 1..16"):
        generation.check_sampling(17, 0.0, 0, 16)


def test_demo_vocabulary_and_snapshot_arrays_round_trip():
    session = seqrt.Session(str(DEMO))
    vocabulary = generation.CharVocabulary.of(session)
    tokens = vocabulary.encode("It is a truth")
    with pytest.raises(codec.RequestError, match="outside the model's "
                       "vocabulary: \\['€'\\]"):
        vocabulary.encode("a €")
    stream = seqrt.Stream(session)
    stream.prefill({"tokens": tokens})
    arrays = stream.snapshot().arrays()
    assert set(arrays) == {pair[0] for pair in session.state_pairs}
    # Through a .npz file, as a client keeps it.
    arrays = codec.load_npz(codec.npz_bytes(arrays))
    copy = seqrt.Stream(session)
    copy.restore(seqrt.StreamSnapshot.from_arrays(arrays))
    # The state comes back bit for bit; the steps' logits agree to rounding
    # only, since the CPU backend may run one of them on fewer threads (its
    # thread governor, on a busy machine), which changes summation order.
    for name, array in copy.snapshot().arrays().items():
        np.testing.assert_array_equal(array, arrays[name])
    step = {"tokens": tokens[:, :1]}
    np.testing.assert_allclose(stream.step(step)[0], copy.step(step)[0],
                               rtol=1e-5, atol=1e-5)
    arrays["past_position"] = arrays["past_position"].astype(np.int32)
    with pytest.raises(seqrt.InvalidArgumentError, match="past_position"):
        copy.restore(seqrt.StreamSnapshot.from_arrays(arrays))
    with pytest.raises(seqrt.InvalidArgumentError, match="'bogus' is not a "
                       "state input"):
        copy.restore(seqrt.StreamSnapshot.from_arrays({"bogus": np.zeros(1)}))
