"""Stateful ops: a sequence run whole equals the same sequence cut in two
with the state carried (present_state of part 1 → past_state of part 2),
in seqrt, in onnxruntime and in eager PyTorch (OPS.md)."""

import math

import numpy as np
import pytest
import torch

import seqrt.export as sx
from conftest import ATOL, RTOL, cross_check


class Stateful(torch.nn.Module):
    """fn(inputs..., past_state=None, position=None) with fixed weights."""

    def __init__(self, fn, with_state: bool, with_position: bool = False, **weights):
        super().__init__()
        self.fn, self.with_state, self.with_position = fn, with_state, with_position
        for name, value in weights.items():
            self.register_buffer(name, value)

    def forward(self, *args):
        n = len(args) - self.with_state - self.with_position
        state = args[n] if self.with_state else None
        position = args[-1] if self.with_position else None
        return self.fn(self, *args[:n], past_state=state, position=position)


def _slice(inputs, axes, start, end):
    return {n: t.narrow(axes[n], start, end - start) for n, t in inputs.items()}


def _check_split(fn, inputs, axes, split, y_axis, tmp_path, backend,
                 position=False, **weights):
    length = next(t.shape[axes[n]] for n, t in inputs.items())
    with torch.no_grad():
        whole = Stateful(fn, False, **weights)(*inputs.values())[0].numpy()
    first = _slice(inputs, axes, 0, split)
    (tmp_path / "a").mkdir()
    out1 = cross_check(Stateful(fn, False, **weights), first, ["y", "present_state"],
                       tmp_path / "a", backend)
    second = _slice(inputs, axes, split, length)
    second["past_state"] = torch.from_numpy(out1["present_state"])
    if position:
        batch = next(iter(inputs.values())).shape[0]
        second["position"] = torch.full((batch,), split, dtype=torch.int64)
    (tmp_path / "b").mkdir()
    out2 = cross_check(Stateful(fn, True, position, **weights), second,
                       ["y", "present_state"], tmp_path / "b", backend)
    joined = np.concatenate([out1["y"], out2["y"]], axis=y_axis)
    np.testing.assert_allclose(joined, whole, rtol=RTOL, atol=ATOL)


def test_retention_split(backend, tmp_path):
    inputs = {"q": torch.randn(1, 2, 12, 4), "k": torch.randn(1, 2, 12, 4),
              "v": torch.randn(1, 2, 12, 3)}

    def fn(m, q, k, v, past_state=None, position=None):
        return sx.retention(q, k, v, past_state, gammas=[0.8, 0.95])

    _check_split(fn, inputs, {"q": 2, "k": 2, "v": 2}, 5, 2, tmp_path, backend)


def test_selective_scan_split(backend, tmp_path):
    inputs = {"u": torch.randn(1, 4, 12), "delta": torch.randn(1, 4, 12),
              "Bm": torch.randn(1, 2, 3, 12), "Cm": torch.randn(1, 2, 3, 12)}

    def fn(m, u, delta, bm, cm, past_state=None, position=None):
        return sx.selective_scan(u, delta, m.a, bm, cm, m.dskip, None, None,
                                 past_state)

    _check_split(fn, inputs, {"u": 2, "delta": 2, "Bm": 3, "Cm": 3}, 7, 2,
                 tmp_path, backend, a=-torch.rand(4, 3) - 0.2, dskip=torch.randn(4))


def test_ssd_split(backend, tmp_path):
    inputs = {"x": torch.randn(1, 12, 2, 3), "dt": torch.randn(1, 12, 2),
              "Bm": torch.randn(1, 12, 1, 4), "Cm": torch.randn(1, 12, 1, 4)}

    def fn(m, x, dt, bm, cm, past_state=None, position=None):
        return sx.ssd(x, dt, m.a, bm, cm, past_state=past_state)

    _check_split(fn, inputs, {"x": 1, "dt": 1, "Bm": 1, "Cm": 1}, 4, 1,
                 tmp_path, backend, a=-torch.rand(2) - 0.2)


@pytest.mark.parametrize("split", [4, 6])
def test_neural_memory_split(split, backend, tmp_path):
    """Chunks of 4 aligned to absolute positions: a cut at 6 is mid-chunk,
    so part 2 must take its first anchor from the state."""
    b, h, t, d, m = 1, 2, 10, 4, 8
    inputs = {"q": torch.randn(b, h, t, d), "k": torch.randn(b, h, t, d),
              "v": torch.randn(b, h, t, d), "theta": 0.2 * torch.rand(b, h, t),
              "eta": torch.rand(b, h, t), "alpha": 0.1 * torch.rand(b, h, t)}

    def fn(mod, q, k, v, theta, eta, alpha, past_state=None, position=None):
        return sx.neural_memory(q, k, v, theta, eta, alpha, mod.w1, mod.w2,
                                past_state, position, chunk_size=4)

    _check_split(fn, inputs, {n: 2 for n in inputs}, split, 2, tmp_path, backend,
                 position=True, w1=torch.randn(h, d, m) / math.sqrt(d),
                 w2=torch.randn(h, m, d) / math.sqrt(m))
