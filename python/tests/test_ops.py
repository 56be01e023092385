"""Each seqrt op alone: eager PyTorch == onnxruntime (function) == seqrt."""

import inspect
import math

import numpy as np
import pytest
import torch

import seqrt.export as sx
from conftest import ATOL, RTOL, cross_check, run_onnxruntime, run_seqrt


class OpModule(torch.nn.Module):
    """Wraps a function of tensors as a module (constants become weights)."""

    def __init__(self, fn, **weights):
        super().__init__()
        self.fn = fn
        for name, value in weights.items():
            self.register_buffer(name, value)

    def forward(self, *args):
        return self.fn(self, *args)


ATTENTION_CASES = {
    "softmax": dict(),
    "causal_gqa": dict(is_causal=True),
    "window": dict(is_causal=True, window_left=3),
    "window_both": dict(window_left=2, window_right=1),
    "sigmoid": dict(score="sigmoid", sigmoid_bias=-math.log(9.0), is_causal=True),
    "softcap_scale": dict(softcap=5.0, scale=0.5),
}


@pytest.mark.parametrize("case", list(ATTENTION_CASES))
def test_attention(case, backend, tmp_path):
    attrs = ATTENTION_CASES[case]
    hkv = 2 if case == "causal_gqa" else 4
    inputs = {"q": torch.randn(2, 4, 9, 8), "k": torch.randn(2, hkv, 9, 8),
              "v": torch.randn(2, hkv, 9, 8)}
    module = OpModule(lambda m, q, k, v: sx.attention(q, k, v, **attrs)[0])
    cross_check(module, inputs, ["y"], tmp_path, backend, ["Attention"])


@pytest.mark.parametrize("mask", ["bool", "float"])
def test_attention_mask_and_cache(mask, backend, tmp_path):
    """Decode-like: 3 new queries over 6 cached + 3 new keys, a mask that
    hides every key of one row (that row must be 0, not NaN)."""
    t_new, t_past = 3, 6
    allow = torch.rand(1, 1, t_new, t_past + t_new) > 0.3
    allow[..., 1, :] = False
    if mask == "bool":
        attn_mask = allow
    else:
        attn_mask = torch.where(allow, torch.zeros(()), torch.full((), -math.inf))
    inputs = {"q": torch.randn(1, 4, t_new, 8), "k": torch.randn(1, 2, t_new, 8),
              "v": torch.randn(1, 2, t_new, 8),
              "past_key": torch.randn(1, 2, t_past, 8),
              "past_value": torch.randn(1, 2, t_past, 8)}

    def fn(m, q, k, v, pk, pv):
        return sx.attention(q, k, v, m.mask, pk, pv, is_causal=True)

    module = OpModule(fn, mask=attn_mask)
    out = cross_check(module, inputs, ["y", "present_key", "present_value"],
                      tmp_path, backend, ["Attention"])
    assert (out["y"][:, :, 1] == 0).all()


@pytest.mark.parametrize("case", ["default", "gammas_state"])
def test_retention(case, backend, tmp_path):
    inputs = {"q": torch.randn(2, 3, 11, 8), "k": torch.randn(2, 3, 11, 8),
              "v": torch.randn(2, 3, 11, 6)}
    if case == "default":
        module = OpModule(lambda m, q, k, v: sx.retention(q, k, v))
    else:
        inputs["past_state"] = torch.randn(2, 3, 8, 6)
        module = OpModule(lambda m, q, k, v, s: sx.retention(
            q, k, v, s, gammas=[0.5, 0.9, 0.99], scale=0.3, chunk_size=4))
    cross_check(module, inputs, ["y", "present_state"], tmp_path, backend,
                ["Retention"])


def _selective_scan_inputs(b=2, d=6, n=4, g=2, length=10):
    return {"u": torch.randn(b, d, length), "delta": torch.randn(b, d, length),
            "Bm": torch.randn(b, g, n, length), "Cm": torch.randn(b, g, n, length),
            "z": torch.randn(b, d, length)}


@pytest.mark.parametrize("case", ["full", "plain"])
def test_selective_scan(case, backend, tmp_path):
    inputs = _selective_scan_inputs()
    a = -torch.rand(6, 4) - 0.5
    if case == "full":
        inputs["past_state"] = torch.randn(2, 6, 4)
        inputs["delta"][0, 0, :3] = 25.0  # above the softplus threshold

        def fn(m, u, delta, bm, cm, z, s):
            return sx.selective_scan(u, delta, m.a, bm, cm, m.dskip, z, m.bias, s)

        module = OpModule(fn, a=a, dskip=torch.randn(6), bias=torch.randn(6))
    else:
        del inputs["z"]

        def fn(m, u, delta, bm, cm):
            return sx.selective_scan(u, torch.sigmoid(delta), m.a, bm, cm,
                                     delta_softplus=False)

        module = OpModule(fn, a=a)
    cross_check(module, inputs, ["y", "present_state"], tmp_path, backend,
                ["SelectiveScan"])


@pytest.mark.parametrize("case", ["full", "plain"])
def test_ssd(case, backend, tmp_path):
    b, length, h, p, g, n = 2, 10, 4, 3, 2, 5
    inputs = {"x": torch.randn(b, length, h, p), "dt": torch.randn(b, length, h),
              "Bm": torch.randn(b, length, g, n), "Cm": torch.randn(b, length, g, n)}
    a = -torch.rand(h) - 0.5
    if case == "full":
        inputs["z"] = torch.randn(b, length, h, p)
        inputs["past_state"] = torch.randn(b, h, p, n)

        def fn(m, x, dt, bm, cm, z, s):
            return sx.ssd(x, dt, m.a, bm, cm, m.d, z, m.bias, s, dt_min=0.05,
                          dt_max=2.0, chunk_size=4)

        module = OpModule(fn, a=a, d=torch.randn(h), bias=torch.randn(h))
    else:
        module = OpModule(lambda m, x, dt, bm, cm: sx.ssd(x, dt, m.a, bm, cm), a=a)
    cross_check(module, inputs, ["y", "present_state"], tmp_path, backend, ["SSD"])


class Body(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)

    def forward(self, y):
        return torch.tanh(self.lin(y))


@pytest.mark.parametrize("method", ["euler", "rk2", "rk2_gated", "rk4"])
def test_runge_kutta(method, backend, tmp_path):
    d = 8

    class Step(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = Body(d)
            self.gate_weight = torch.nn.Parameter(torch.randn(2 * d) * 0.3)
            self.gate_bias = torch.nn.Parameter(torch.randn(1))

        def forward(self, y):
            gated = method == "rk2_gated"
            return sx.runge_kutta(self.body, y, self.gate_weight if gated else None,
                                  self.gate_bias if gated else None, method=method)

    cross_check(Step(), {"y": torch.randn(2, 5, d)}, ["y_next"], tmp_path,
                backend, ["RungeKutta"])


NEURAL_MEMORY_CASES = {
    "depth2_gelu": dict(depth=2, activation="gelu", chunk_size=1),
    "depth2_silu_chunk": dict(depth=2, activation="silu", chunk_size=4),
    "depth1_before": dict(depth=1, chunk_size=3, retrieve="before_update"),
    "state_position": dict(depth=2, chunk_size=4),
}


@pytest.mark.parametrize("case", list(NEURAL_MEMORY_CASES))
def test_neural_memory(case, backend, tmp_path):
    attrs = NEURAL_MEMORY_CASES[case]
    b, h, t, d = 2, 2, 9, 4
    m = d if attrs["depth"] == 1 else 2 * d
    inputs = {"q": torch.randn(b, h, t, d), "k": torch.randn(b, h, t, d),
              "v": torch.randn(b, h, t, d),
              "theta": 0.1 * torch.rand(b, h, t), "eta": torch.rand(b, h, t),
              "alpha": 0.2 * torch.rand(b, h, t)}
    weights = {"w1": torch.randn(h, d, m) / math.sqrt(d)}
    if attrs["depth"] == 2:
        weights["w2"] = torch.randn(h, m, d) / math.sqrt(m)
    if case == "state_position":
        params = 2 * d * m
        inputs["past_state"] = torch.randn(b, h, 3 * params) * 0.3
        inputs["position"] = torch.tensor([5, 8])

        def fn(mod, q, k, v, theta, eta, alpha, s, pos):
            return sx.neural_memory(q, k, v, theta, eta, alpha, mod.w1, mod.w2,
                                    s, pos, **attrs)
    else:
        def fn(mod, q, k, v, theta, eta, alpha):
            return sx.neural_memory(q, k, v, theta, eta, alpha, mod.w1,
                                    getattr(mod, "w2", None), **attrs)

    cross_check(OpModule(fn, **weights), inputs, ["y", "present_state"],
                tmp_path, backend, ["NeuralMemory"])


@pytest.mark.parametrize("op", ["retention", "selective_scan", "attention"])
def test_functions_are_shape_generic(op, backend, tmp_path):
    """Exported with a symbolic length, run at another length: the ONNX
    functions compute shapes at run time, and seqrt binds the symbol."""
    if op == "retention":
        make = lambda t: {"q": torch.randn(1, 2, t, 4), "k": torch.randn(1, 2, t, 4),
                          "v": torch.randn(1, 2, t, 4)}
        module = OpModule(lambda m, q, k, v: sx.retention(q, k, v)[0])
        axes = {"q": 2, "k": 2, "v": 2, "y": 2}
    elif op == "selective_scan":
        make = lambda t: {"u": torch.randn(1, 4, t), "delta": torch.randn(1, 4, t),
                          "Bm": torch.randn(1, 1, 3, t), "Cm": torch.randn(1, 1, 3, t)}
        module = OpModule(lambda m, u, d, b, c: sx.selective_scan(u, d, m.a, b, c)[0],
                          a=-torch.rand(4, 3))
        axes = {"u": 2, "delta": 2, "Bm": 3, "Cm": 3, "y": 2}
    else:
        make = lambda t: {"q": torch.randn(1, 4, t, 8), "k": torch.randn(1, 2, t, 8),
                          "v": torch.randn(1, 2, t, 8)}
        module = OpModule(lambda m, q, k, v: sx.attention(
            q, k, v, is_causal=True, window_left=4)[0])
        axes = {"q": 2, "k": 2, "v": 2, "y": 2}
    inputs = make(6)
    path = tmp_path / "model.onnx"
    sx.export(module, tuple(inputs.values()), str(path), input_names=list(inputs),
              output_names=["y"], dynamic_axes={n: {a: "T"} for n, a in axes.items()})
    longer = make(13)
    with torch.no_grad():
        expected = module(*longer.values()).numpy()
    feeds = {n: t.numpy() for n, t in longer.items()}
    np.testing.assert_allclose(run_onnxruntime(path, feeds)["y"], expected,
                               rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(run_seqrt(path, feeds, backend, tmp_path)["y"],
                               expected, rtol=RTOL, atol=ATOL)


def test_plain_torch_export_is_refused(tmp_path):
    """Without seqrt.export.export the file would lack the functions (and
    have misplaced optional inputs): the op says so instead."""
    module = OpModule(lambda m, q, k, v: sx.retention(q, k, v)[0])
    args = tuple(torch.randn(1, 2, 3, 4) for _ in range(3))
    options = {}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        options["dynamo"] = False  # the exporter that runs symbolic()
    with pytest.raises(Exception, match="seqrt.export.export"):
        torch.onnx.export(module, args, str(tmp_path / "m.onnx"),
                          custom_opsets={"seqrt": 1}, opset_version=17, **options)


def test_exported_model_shape(tmp_path):
    """One function per distinct configuration, overloaded when an op needs
    two; omitted optional inputs are empty names in their slots."""
    def fn(m, q, k, v):
        a = sx.attention(q, k, v, is_causal=True)[0]
        b = sx.attention(q, k, v, m.mask, score="sigmoid")[0]
        return a + b

    module = OpModule(fn, mask=torch.ones(5, 5, dtype=torch.bool))
    args = tuple(torch.randn(1, 2, 5, 4) for _ in range(3))
    model = sx.export(module, args)
    nodes = [n for n in model.graph.node if n.domain == "seqrt"]
    assert [len(n.input) for n in nodes] == [3, 4]
    assert sorted(f.overload for f in model.functions) == ["v1", "v2"]
    assert {n.overload for n in nodes} == {"v1", "v2"}
    assert all(f.domain == "seqrt" and f.name == "Attention" for f in model.functions)
    assert not any(a.name == "seqrt_call" for n in nodes for a in n.attribute)
