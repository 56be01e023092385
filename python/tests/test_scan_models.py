"""bench/compare/scan_models.py: the recurrences written as plain-ONNX
Scans (issue 26). Each quick model passes onnx.checker, onnxruntime runs
the algebra its docstring states (checked against a NumPy loop in float64),
and seqrt.Session on the reference and cpu backends agrees with
onnxruntime (rtol 1e-4, atol 1e-5 as conftest.py explains)."""

import sys

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import seqrt
from conftest import ATOL, REPO, RTOL, run_onnxruntime

sys.path.insert(0, str(REPO / "bench"))
from compare import scan_models  # noqa: E402


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def selective_loop(feeds, weights):
    a, h = weights["A"].astype(np.float64), feeds["h0"].astype(np.float64)
    ys = []
    for u, delta, b, c in zip(feeds["u"], feeds["delta"], feeds["B"], feeds["C"]):
        h = np.exp(delta[:, None] * a) * h + (delta * u)[:, None] * b[None, :]
        ys.append((h * c[None, :]).sum(axis=1))
    return {"h_last": h, "y": np.stack(ys)}


def retention_loop(feeds, weights):
    gamma, s = weights["gamma"].astype(np.float64), feeds["S0"].astype(np.float64)
    outs = []
    for q, k, v in zip(feeds["q"], feeds["k"], feeds["v"]):
        s = gamma[:, None, None] * s + k[:, :, None] * v[:, None, :]
        outs.append(np.einsum("hk,hkv->hv", q, s))
    return {"S_last": s, "o": np.stack(outs)}


def delta_loop(feeds, weights):
    s = feeds["S0"].astype(np.float64)
    outs = []
    for q, k, v, beta in zip(feeds["q"], feeds["k"], feeds["v"], feeds["beta"]):
        error = v - np.einsum("hk,hkv->hv", k, s)
        s = s + k[:, :, None] * (beta[:, None] * error)[:, None, :]
        outs.append(np.einsum("hk,hkv->hv", q, s))
    return {"S_last": s, "o": np.stack(outs)}


def lstm_loop(feeds, weights):
    h, c = feeds["h0"].astype(np.float64), feeds["c0"].astype(np.float64)
    ys = []
    for x in feeds["x"]:
        gates = x @ weights["W"] + h @ weights["R"] + weights["b"]
        i, o, f, g = np.split(gates, 4, axis=1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        ys.append(h)
    return {"h_last": h, "c_last": c, "y": np.stack(ys)}


def gru_loop(feeds, weights):
    h = feeds["h0"].astype(np.float64)
    ys = []
    for x in feeds["x"]:
        x_r, x_z, x_n = np.split(x @ weights["W"] + weights["bW"], 3, axis=1)
        h_r, h_z, h_n = np.split(h @ weights["R"] + weights["bR"], 3, axis=1)
        r, z = sigmoid(x_r + h_r), sigmoid(x_z + h_z)
        n = np.tanh(x_n + r * h_n)
        h = (1 - z) * n + z * h
        ys.append(h)
    return {"h_last": h, "y": np.stack(ys)}


LOOPS = {"scan_selective": selective_loop, "scan_retention": retention_loop,
         "scan_delta": delta_loop,
         "scan_lstm": lstm_loop, "scan_gru": gru_loop}


@pytest.fixture(scope="module", params=sorted(scan_models.MODELS))
def quick_model(request, tmp_path_factory):
    """(name, path, feeds, onnxruntime's outputs) of a quick case."""
    case, = scan_models.MODELS[request.param](True)
    path = tmp_path_factory.mktemp(case.key) / "model.onnx"
    feeds = case.write(path)
    return request.param, path, feeds, run_onnxruntime(path, feeds)


def test_model_is_a_plain_onnx_scan(quick_model):
    name, path, feeds, _ = quick_model
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    assert [n.op_type for n in model.graph.node] == ["Scan"]
    assert {o.domain for o in model.opset_import} == {""}
    assert [i.name for i in model.graph.input] == list(feeds)


def test_onnxruntime_computes_the_stated_recurrence(quick_model):
    name, path, feeds, from_ort = quick_model
    weights = {t.name: numpy_helper.to_array(t)
               for t in onnx.load(str(path)).graph.initializer}
    expected = LOOPS[name](feeds, weights)
    assert set(expected) == set(from_ort)
    for output, value in expected.items():
        np.testing.assert_allclose(from_ort[output], value, rtol=RTOL, atol=ATOL,
                                   err_msg=f"{name} {output}")


@pytest.mark.parametrize("backend", ["reference", "cpu"])
def test_seqrt_session_agrees_with_onnxruntime(quick_model, backend):
    name, path, feeds, from_ort = quick_model
    session = seqrt.Session(str(path), backend=backend)
    names = [o.name for o in session.get_outputs()]
    assert names == list(from_ort)
    for output, value in zip(names, session.run(None, feeds)):
        np.testing.assert_allclose(value, from_ort[output], rtol=RTOL, atol=ATOL,
                                   err_msg=f"{name} {output} on {backend}")
