"""The Python bindings (seqrt.Session, seqrt.Stream) on files made by
seqrt.export, checked against onnxruntime on the same file (rtol 1e-4,
atol 1e-5, as conftest.py explains) and against themselves: a Stream's
prefill then steps equal one whole run; a snapshot restores the state; one
Session gives the same results from four threads; errors are Python
exceptions carrying the runtime's message."""

import concurrent.futures
import gc
import importlib.metadata
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from onnx import TensorProto, helper

import seqrt
import seqrt.export as sx
from seqrt.export import layers
from conftest import ATOL, RTOL, run_onnxruntime, seqrt_cli

DIM, HEADS, DK = 16, 2, 8
GAMMAS = [0.8, 0.95]


class RetentionLayer(torch.nn.Module):
    """A stateful layer: projections around seqrt::Retention, whose state
    (past_state -> present_state) a Stream carries."""

    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(DIM, 3 * HEADS * DK)
        self.out = torch.nn.Linear(HEADS * DK, DIM)

    def forward(self, x, past_state):
        b, t = x.shape[0], x.shape[1]
        q, k, v = (p.reshape(b, t, HEADS, DK).transpose(1, 2)
                   for p in self.qkv(x).chunk(3, dim=-1))
        y, state = sx.retention(q, k, v, past_state, gammas=GAMMAS)
        return self.out(y.transpose(1, 2).reshape(b, t, HEADS * DK)), state


def zero_state():
    return np.zeros((1, HEADS, DK, DK), np.float32)


@pytest.fixture(scope="module")
def retention_model(tmp_path_factory):
    torch.manual_seed(1)
    path = tmp_path_factory.mktemp("retention") / "retention.onnx"
    x = torch.randn(1, 5, DIM)
    sx.export(RetentionLayer().eval(), (x, torch.from_numpy(zero_state())),
              str(path), input_names=["x", "past_state"],
              output_names=["y", "present_state"],
              dynamic_axes={"x": {1: "seq"}, "y": {1: "seq"}})
    return path


@pytest.fixture(scope="module")
def mamba_model(tmp_path_factory):
    torch.manual_seed(2)
    path = tmp_path_factory.mktemp("mamba") / "mamba.onnx"
    sx.export(layers.MambaBlock(DIM, d_state=8).eval(),
              (torch.randn(2, 12, DIM),), str(path), input_names=["x"],
              output_names=["y"])
    return path


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def aligned(array, alignment=64):
    """A copy of `array` whose data is `alignment`-byte aligned: seqrt reads
    such a feed in place instead of copying it."""
    raw = np.empty(array.nbytes + alignment, np.uint8)
    start = -raw.ctypes.data % alignment
    out = raw[start:start + array.nbytes].view(array.dtype).reshape(array.shape)
    out[...] = array
    assert out.ctypes.data % alignment == 0
    return out


def assert_close(actual, expected, what=""):
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL,
                               err_msg=what)


# --- Session.run against onnxruntime --------------------------------------

def test_run_matches_onnxruntime(backend, mamba_model, retention_model):
    feeds = {"x": rand(2, 12, DIM)}
    y, = seqrt.Session(mamba_model, backend=backend).run(["y"], feeds)
    assert_close(y, run_onnxruntime(mamba_model, feeds)["y"], "MambaBlock")

    feeds = {"x": rand(1, 9, DIM, seed=1), "past_state": rand(1, HEADS, DK, DK)}
    session = seqrt.Session(str(retention_model), backend=backend)
    expected = run_onnxruntime(retention_model, feeds)
    for name, value in zip(["y", "present_state"], session.run(None, feeds)):
        assert_close(value, expected[name], f"retention {name}")


def test_run_returns_the_outputs_asked_for_in_order(retention_model):
    session = seqrt.Session(retention_model, backend="reference")
    feeds = {"x": rand(1, 4, DIM)}  # past_state unfed: starts from zeros
    y, state = session.run(None, feeds)
    state2, y2 = session.run(["present_state", "y"], feeds)
    np.testing.assert_array_equal(y, y2)
    np.testing.assert_array_equal(state, state2)
    assert y.shape == (1, 4, DIM) and y.dtype == np.float32
    expected = run_onnxruntime(retention_model,
                               {**feeds, "past_state": zero_state()})
    assert_close(y, expected["y"])


def test_seqrt_file_matches_onnx(tmp_path, mamba_model):
    native = tmp_path / "mamba.seqrt"
    subprocess.run([seqrt_cli(), "convert", str(mamba_model), str(native)],
                   check=True, capture_output=True)
    feeds = {"x": rand(2, 12, DIM)}
    from_seqrt = seqrt.Session(native, backend="cpu").run(None, feeds)[0]
    from_onnx = seqrt.Session(mamba_model, backend="cpu").run(None, feeds)[0]
    assert_close(from_seqrt, from_onnx)


def test_inputs_outputs_and_properties_match_onnxruntime(retention_model):
    session = seqrt.Session(retention_model, backend="cpu")
    peer = ort.InferenceSession(str(retention_model),
                                providers=["CPUExecutionProvider"])
    describe = lambda args: [(a.name, a.shape, a.type) for a in args]
    assert describe(session.get_inputs()) == describe(peer.get_inputs())
    assert describe(session.get_inputs()) == [
        ("x", [1, "seq", DIM], "tensor(float)"),
        ("past_state", [1, HEADS, DK, DK], "tensor(float)")]
    # Output shapes are seqrt's inferred ones: onnxruntime keeps the
    # exporter's placeholder name for y's batch dim ('Addy_dim_0').
    assert [(a.name, a.type) for a in session.get_outputs()] == [
        (a.name, a.type) for a in peer.get_outputs()]
    assert describe(session.get_outputs()) == [
        ("y", [1, "seq", DIM], "tensor(float)"),
        ("present_state", [1, HEADS, DK, DK], "tensor(float)")]
    assert "NodeArg(name='x'" in repr(session.get_inputs()[0])
    assert session.state_pairs == [("past_state", "present_state")]
    assert session.backend == "cpu"
    assert isinstance(session.metadata, dict)


def test_bind_fixes_a_symbolic_dim(retention_model):
    session = seqrt.Session(retention_model, backend="cpu", bind={"seq": 3})
    y, _ = session.run(None, {"x": rand(1, 3, DIM)})
    assert y.shape == (1, 3, DIM)
    with pytest.raises(ValueError, match="dim 'seq' must be a size >= 0"):
        seqrt.Session(retention_model, bind={"seq": -1})


# --- Stream ---------------------------------------------------------------

def test_stream_prefill_then_steps_equals_whole_run(backend, retention_model):
    session = seqrt.Session(retention_model, backend=backend)
    x = rand(1, 10, DIM, seed=3)
    whole = run_onnxruntime(retention_model,
                            {"x": x, "past_state": zero_state()})
    stream = seqrt.Stream(session)
    parts = stream.prefill({"x": x[:, :6]})
    assert len(parts) == 1  # present_state stays in the stream
    for t in range(6, 10):
        parts += stream.step({"x": x[:, t:t + 1]})
    assert_close(np.concatenate(parts, axis=1), whole["y"], "stream vs whole")
    assert stream.snapshot().names == ["past_state"]


def test_snapshot_restore_and_reset(retention_model):
    stream = seqrt.Stream(seqrt.Session(retention_model, backend="cpu"))
    prompt, token = rand(1, 5, DIM, seed=4), rand(1, 1, DIM, seed=5)
    assert stream.snapshot().names == []
    first, = stream.prefill({"x": prompt})
    saved = stream.snapshot()
    after, = stream.step({"x": token})
    again, = stream.step({"x": token})  # from a different state
    assert not np.allclose(after, again)
    stream.restore(saved)
    np.testing.assert_array_equal(stream.step({"x": token})[0], after)
    stream.reset()
    np.testing.assert_array_equal(stream.prefill({"x": prompt})[0], first)
    assert "past_state" in repr(saved)


def test_restore_refuses_another_models_state(retention_model, mamba_model):
    stream = seqrt.Stream(seqrt.Session(retention_model, backend="cpu"))
    stream.prefill({"x": rand(1, 2, DIM)})
    stateless = seqrt.Stream(seqrt.Session(mamba_model, backend="cpu"))
    assert stateless.prefill({"x": rand(2, 12, DIM)})[0].shape == (2, 12, DIM)
    with pytest.raises(seqrt.InvalidArgumentError,
                       match="'past_state' is not a state input"):
        stateless.restore(stream.snapshot())


def test_stream_keeps_its_session_alive(retention_model):
    stream = seqrt.Stream(seqrt.Session(retention_model, backend="cpu"))
    assert stream.step({"x": rand(1, 1, DIM)})[0].shape == (1, 1, DIM)
    assert stream.session.backend == "cpu"


def test_stream_refuses_state_outputs(retention_model):
    stream = seqrt.Stream(seqrt.Session(retention_model, backend="cpu"))
    with pytest.raises(seqrt.InvalidArgumentError, match="present_state.*snapshot"):
        stream.step({"x": rand(1, 1, DIM)}, ["present_state"])


def test_gpt_block_stream_matches_decoding_by_hand(tmp_path):
    """A growing KV cache: the decode graph of GPTBlock, its cache fed once
    from the prefill graph and then carried by the Stream."""
    torch.manual_seed(3)
    block = layers.GPTBlock(DIM, 4, kv_heads=2).eval()
    tokens = torch.randn(1, 8, DIM)
    prefill_path, decode_path = tmp_path / "prefill.onnx", tmp_path / "decode.onnx"
    sx.export(block, (tokens[:, :5],), str(prefill_path), input_names=["x"],
              output_names=["y", "present_key", "present_value"])
    with torch.no_grad():
        past = block(tokens[:, :5])[1:]
    sx.export(block, (tokens[:, 5:6], *past), str(decode_path),
              input_names=["x", "past_key", "past_value"],
              output_names=["y", "present_key", "present_value"],
              dynamic_axes={"past_key": {2: "past"}, "past_value": {2: "past"},
                            "present_key": {2: "total"},
                            "present_value": {2: "total"}})
    x = tokens.numpy()
    _, key, value = seqrt.Session(prefill_path, backend="cpu").run(
        None, {"x": x[:, :5]})
    stream = seqrt.Stream(seqrt.Session(decode_path, backend="cpu"))
    ys = stream.step({"x": x[:, 5:6], "past_key": key, "past_value": value})
    ys += stream.step({"x": x[:, 6:7]})
    ys += stream.step({"x": x[:, 7:8]})
    with torch.no_grad():
        whole = block(tokens)[0][:, 5:].numpy()
    assert_close(np.concatenate(ys, axis=1), whole, "GPTBlock decode")


# --- threads, memory, dtypes ------------------------------------------------

@pytest.fixture(scope="module")
def gpt_model(tmp_path_factory):
    torch.manual_seed(4)
    path = tmp_path_factory.mktemp("gpt") / "gpt.onnx"
    sx.export(layers.GPTBlock(DIM, 4, kv_heads=2).eval(),
              (torch.randn(2, 12, DIM),), str(path), input_names=["x"],
              output_names=["y", "present_key", "present_value"])
    return path


@pytest.mark.parametrize("model", ["gpt_model", "mamba_model"])
def test_one_session_from_four_threads(backend, model, request):
    # MambaBlock's depthwise Conv runs a cached oneDNN primitive: each
    # thread brings its own scratch memory to it.
    session = seqrt.Session(request.getfixturevalue(model), backend=backend)
    # Half the feeds are read in place: their arrays are released by the
    # runtime's threads, which must take the GIL to do it.
    inputs = [{"x": rand(2, 12, DIM, seed=10 + i)} for i in range(8)]
    inputs = [{"x": aligned(f["x"])} if i % 2 else f
              for i, f in enumerate(inputs)]
    expected = [session.run(None, feeds)[0] for feeds in inputs]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            results = list(pool.map(lambda f: session.run(None, f)[0], inputs))
            for got, want in zip(results, expected):
                np.testing.assert_array_equal(got, want)


def test_results_own_their_memory(retention_model):
    session = seqrt.Session(retention_model, backend="cpu")
    feeds = {"x": rand(1, 4, DIM)}
    y, state = session.run(None, feeds)
    expected = y.copy()
    assert y.flags.writeable and state.flags.writeable
    y[...] = 0  # writing a result touches nothing else
    y2, _ = session.run(None, feeds)
    np.testing.assert_array_equal(y2, expected)
    del session, y2
    gc.collect()
    fresh = seqrt.Session(retention_model, backend="cpu").run(None, feeds)
    np.testing.assert_array_equal(state, fresh[1])  # valid after its session


def identity_model(tmp_path, elem_type, name="identity"):
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])], name,
        [helper.make_tensor_value_info("x", elem_type, [2, 3])],
        [helper.make_tensor_value_info("y", elem_type, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=8)  # what onnxruntime 1.17+ reads
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    return path


DTYPES = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
          np.float16: TensorProto.FLOAT16, np.int8: TensorProto.INT8,
          np.uint8: TensorProto.UINT8, np.int32: TensorProto.INT32,
          np.int64: TensorProto.INT64, np.bool_: TensorProto.BOOL}


@pytest.mark.parametrize("dtype", list(DTYPES), ids=lambda d: np.dtype(d).name)
def test_dtypes_round_trip(dtype, backend, tmp_path):
    session = seqrt.Session(identity_model(tmp_path, DTYPES[dtype]),
                            backend=backend)
    peer = ort.InferenceSession(str(tmp_path / "identity.onnx"),
                                providers=["CPUExecutionProvider"])
    assert session.get_inputs()[0].type == peer.get_inputs()[0].type
    x = (np.arange(6) % 3).reshape(2, 3).astype(dtype)
    y, = session.run(None, {"x": x})
    assert y.dtype == x.dtype and y.shape == (2, 3)
    np.testing.assert_array_equal(y, x)
    assert not np.shares_memory(x, y)  # the result does not alias the feed


def test_strided_unaligned_and_big_endian_feeds(tmp_path):
    session = seqrt.Session(identity_model(tmp_path, TensorProto.FLOAT),
                            backend="cpu")
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    for x in (base[::2, ::2],               # not contiguous: copied
              base.reshape(-1)[1:7].reshape(2, 3),  # unaligned: copied
              base[:2, :3].astype(">f4")):  # big-endian: converted
        np.testing.assert_array_equal(session.run(None, {"x": x})[0], x)


def test_bfloat16_with_ml_dtypes(tmp_path):
    ml_dtypes = pytest.importorskip("ml_dtypes")  # onnx depends on it
    session = seqrt.Session(identity_model(tmp_path, TensorProto.BFLOAT16),
                            backend="reference")
    assert session.get_inputs()[0].type == "tensor(bfloat16)"
    x = np.array([[1.5, -2, 0.25], [3, 4, 5]], dtype=ml_dtypes.bfloat16)
    y, = session.run(None, {"x": x})
    assert y.dtype == x.dtype
    np.testing.assert_array_equal(y.astype(np.float32), x.astype(np.float32))


def cast_model(tmp_path, from_type, to_type, name, **attrs):
    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["y"], to=to_type, **attrs)], name,
        [helper.make_tensor_value_info("x", from_type, [5])],
        [helper.make_tensor_value_info("y", to_type, [5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    return path


def test_float4e2m1_and_float8e8m0_travel_as_float32(backend, tmp_path):
    # NumPy has neither: they come and go as float32 values, feeds rounded
    # as Cast rounds by default (f4e2m1 to nearest even, e8m0 up).
    into_f4 = seqrt.Session(cast_model(tmp_path, TensorProto.FLOAT,
                                       TensorProto.FLOAT4E2M1, "into_f4"),
                            backend=backend)
    assert into_f4.get_outputs()[0].type == "tensor(float4e2m1)"
    x = np.array([2.5, -3.5, 100, 0.3, -0.0], dtype=np.float32)
    y, = into_f4.run(None, {"x": x})
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, [2, -4, 6, 0.5, 0])
    from_f4 = seqrt.Session(cast_model(tmp_path, TensorProto.FLOAT4E2M1,
                                       TensorProto.FLOAT, "from_f4"),
                            backend=backend)
    np.testing.assert_array_equal(from_f4.run(None, {"x": x})[0],
                                  [2, -4, 6, 0.5, 0])
    e8m0 = seqrt.Session(cast_model(tmp_path, TensorProto.FLOAT8E8M0,
                                    TensorProto.FLOAT, "from_e8m0"),
                         backend=backend)
    assert e8m0.get_inputs()[0].type == "tensor(float8e8m0)"
    scales = np.array([0.3, 1, 3, 2**-130, 1024], dtype=np.float32)
    np.testing.assert_array_equal(e8m0.run(None, {"x": scales})[0],
                                  [0.5, 1, 4, 2.0**-127, 1024])


# --- errors -----------------------------------------------------------------

def test_missing_file_names_it(tmp_path):
    missing = tmp_path / "nope.onnx"
    with pytest.raises(FileNotFoundError, match="nope.onnx") as error:
        seqrt.Session(missing)
    assert isinstance(error.value, seqrt.SeqrtError)


def test_bad_model_file(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\xff\xff this is not a protobuf")
    with pytest.raises(seqrt.SeqrtError, match="bad.onnx"):
        seqrt.Session(bad)


def test_unknown_backend_lists_the_built_ones(mamba_model):
    with pytest.raises(ValueError, match="unknown backend 'warp'.*reference"):
        seqrt.Session(mamba_model, backend="warp")
    assert seqrt.available_backends()[0] == "reference"
    assert "cpu" in seqrt.available_backends()


def test_feed_errors(retention_model):
    session = seqrt.Session(retention_model, backend="cpu")
    x = rand(1, 2, DIM)
    with pytest.raises(seqrt.InvalidArgumentError, match="'bogus'"):
        session.run(None, {"x": x, "bogus": x})
    with pytest.raises(ValueError, match="x"):
        session.run(None, {"x": x.astype(np.float64)})  # wrong dtype
    with pytest.raises(ValueError, match="x"):
        session.run(None, {"x": rand(2, DIM)})  # wrong rank
    with pytest.raises(ValueError, match="no tensor fed for input 'x'"):
        session.run(None, {})
    with pytest.raises(ValueError, match="no output 'z'.*y, present_state"):
        session.run(["z"], {"x": x})
    with pytest.raises(TypeError, match="feed 'x'.*complex64"):
        session.run(None, {"x": x.astype(np.complex64)})
    with pytest.raises(TypeError, match="int16"):
        session.run(None, {"x": x.astype(np.int16)})
    with pytest.raises(TypeError, match="dict"):
        session.run(None, [x])
    with pytest.raises(TypeError, match="list of names"):
        session.run("y", {"x": x})


def test_failed_stream_step_keeps_the_state(retention_model):
    stream = seqrt.Stream(seqrt.Session(retention_model, backend="cpu"))
    stream.prefill({"x": rand(1, 3, DIM)})
    saved = stream.snapshot()
    with pytest.raises(seqrt.InvalidArgumentError):
        stream.step({"x": rand(1, 1, DIM).astype(np.float64)})
    token = rand(1, 1, DIM, seed=7)
    expected, = stream.step({"x": token})
    stream.restore(saved)
    np.testing.assert_array_equal(stream.step({"x": token})[0], expected)


# --- the package ------------------------------------------------------------

def test_import_does_not_import_torch():
    code = "import sys, seqrt; seqrt.Session; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_version_is_the_package_version():
    assert seqrt.__version__ == importlib.metadata.version("seqrt")
