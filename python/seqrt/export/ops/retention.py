"""seqrt::Retention (OPS.md): RetNet multi-scale retention,
S_t = γ_h S_{t−1} + (scale·k_t)ᵀ v_t, y_t = q_t S_t."""

import math
from typing import Optional, Sequence

import torch

from .._body import Body, scan
from .._session import OpCall
from ._op import OpSpec, SeqrtOp


def default_gammas(heads: int):
    return [1.0 - 2.0 ** (-5 - h) for h in range(heads)]


def retention_eager(q, k, v, past_state=None, *,
                    gammas: Optional[Sequence[float]] = None,
                    scale: Optional[float] = None, chunk_size: int = 64):
    b, h, t, dk = q.shape
    gamma = torch.tensor(list(gammas) if gammas is not None else
                         default_gammas(h), dtype=q.dtype).view(1, h, 1, 1)
    scale = 1.0 / math.sqrt(dk) if scale is None else scale
    k = k * scale
    state = (past_state if past_state is not None else
             q.new_zeros(b, h, dk, v.shape[-1]))
    ys = []
    for i in range(t):
        state = gamma * state + k[:, :, i, :, None] * v[:, :, i, None, :]
        ys.append(torch.matmul(q[:, :, i, None, :], state))
    return torch.cat(ys, dim=2), state


def _gammas_onnx(b: Body, a) -> str:
    if "gammas" in a:
        return b.const([[[[g]] for g in a["gammas"]]])
    heads = b.op("Cast", b.op("Range", b.const(0, "int64"),
                              b.squeeze(b.dim("Q", 1), 0), b.const(1, "int64")),
                 to=1)
    power = b.op("Pow", b.const(2.0), b.op("Neg", b.op("Add", heads, b.const(5.0))))
    gamma = b.op("Sub", b.const(1.0), power)
    return b.op("Reshape", gamma, b.ints(1, -1, 1, 1))


def _step(s: Body, states, slices):
    state, gamma = states
    q_t, k_t, v_t = slices
    kv = s.op("Mul", s.unsqueeze(k_t, 3), s.unsqueeze(v_t, 2))
    state = s.op("Add", s.op("Mul", gamma, state), kv)
    y_t = s.squeeze(s.op("MatMul", s.unsqueeze(q_t, 2), state), 2)
    return [state, gamma], [y_t]


def build_retention(call: OpCall, b: Body) -> None:
    a = call.attrs
    if "scale" in a:
        scale = b.const(a["scale"])
    else:
        scale = b.op("Reciprocal", b.op("Sqrt", b.op("Cast", b.dim("Q", 3), to=1)))
    k = b.op("Mul", "K", scale)
    if call.present[3]:
        state = "past_state"
    else:
        state = b.zeros(b.concat_shape(b.dims("Q", 0, 2), b.dim("K", 3),
                                       b.dim("V", 3)))
    final, _, y = scan(b, [state, _gammas_onnx(b, a)], ["Q", k, "V"], _step,
                       [2, 2, 2], [2], 1)
    b.op_into("Identity", [y], ["Y"])
    b.op_into("Identity", [final], ["present_state"])


SPEC = OpSpec("Retention", ("Q", "K", "V", "past_state"), ("Y", "present_state"),
              build_retention)
_OP = SeqrtOp(SPEC, retention_eager)


def retention(q, k, v, past_state=None, *,
              gammas: Optional[Sequence[float]] = None,
              scale: Optional[float] = None, chunk_size: int = 64):
    """seqrt::Retention. Returns (Y, present_state)."""
    attrs = {"gammas": None if gammas is None else [float(g) for g in gammas],
             "scale": None if scale is None else float(scale),
             "chunk_size": int(chunk_size)}
    return _OP([q, k, v, past_state], attrs)
