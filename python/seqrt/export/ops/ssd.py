"""seqrt::SSD (OPS.md): the Mamba-2 scan with a scalar decay per head,
h_t = exp(Δ_t·A_h)·h_{t−1} + Δ_t·x_t ⊗ B_t, y_t = h_t·C_t + D_h·x_t (·silu z)."""

import math

import torch

from .._body import Body, scan
from .._session import OpCall
from ._op import OpSpec, SeqrtOp
from .selective_scan import softplus_thresholded


def _groups_to_heads(m, heads: int):
    """(B,L,G,N) → (B,L,H,N): head h reads group h / (H/G)."""
    b, l, g, n = m.shape
    return m[:, :, :, None].expand(b, l, g, heads // g, n).reshape(b, l, heads, n)


def ssd_eager(x, dt, A, Bm, Cm, D=None, z=None, dt_bias=None, past_state=None,
              *, dt_softplus: int = 1, dt_min: float = 0.0,
              dt_max: float = math.inf, chunk_size: int = 256):
    bsz, length, heads, p = x.shape
    if dt_bias is not None:
        dt = dt + dt_bias
    if dt_softplus:
        dt = softplus_thresholded(dt)
    dt = torch.clamp(dt, min=dt_min, max=dt_max)
    bm, cm = _groups_to_heads(Bm, heads), _groups_to_heads(Cm, heads)
    h = (past_state if past_state is not None else
         x.new_zeros(bsz, heads, p, Bm.shape[-1]))
    ys = []
    for t in range(length):
        step = dt[:, t, :, None, None]
        h = (torch.exp(step * A[None, :, None, None]) * h +
             step * x[:, t, :, :, None] * bm[:, t, :, None, :])
        ys.append((h * cm[:, t, :, None, :]).sum(-1))
    y = torch.stack(ys, dim=1)
    if D is not None:
        y = y + D[:, None] * x
    if z is not None:
        y = y * (z * torch.sigmoid(z))
    return y, h


def _groups_to_heads_onnx(b: Body, m: str) -> str:
    per_group = b.op("Div", b.dim("x", 2), b.dim(m, 2))
    expanded = b.op("Expand", b.unsqueeze(m, 3),
                    b.concat_shape(b.dims(m, 0, 3), per_group, b.dim(m, 3)))
    return b.op("Reshape", expanded,
                b.concat_shape(b.dims("x", 0, 3), b.dim(m, 3)))


def _step(s: Body, states, slices):
    (h,) = states
    decay, drive, c = slices  # (B,H,1,1), (B,H,P,N), (B,H,1,N)
    h = s.op("Add", s.op("Mul", decay, h), drive)
    return [h], [s.reduce_sum(s.op("Mul", h, c), -1)]


def build_ssd(call: OpCall, b: Body) -> None:
    given = dict(zip(SPEC.inputs, call.present))
    a = call.attrs
    dt = "dt"
    if given["dt_bias"]:
        dt = b.op("Add", dt, "dt_bias")
    if a.get("dt_softplus", 1):
        dt = b.softplus_thresholded(dt)
    dt = b.op("Max", dt, b.const(a.get("dt_min", 0.0)))
    dt = b.op("Min", dt, b.const(a.get("dt_max", math.inf)))
    dt4 = b.unsqueeze(dt, 3, 4)  # (B,L,H,1,1)
    decay = b.op("Exp", b.op("Mul", dt4, b.unsqueeze("A", 1, 2)))
    bm = b.unsqueeze(_groups_to_heads_onnx(b, "Bm"), 3)  # (B,L,H,1,N)
    drive = b.op("Mul", b.op("Mul", dt4, b.unsqueeze("x", 4)), bm)
    c = b.unsqueeze(_groups_to_heads_onnx(b, "Cm"), 3)
    if given["past_state"]:
        h0 = "past_state"
    else:
        h0 = b.zeros(b.concat_shape(b.dim("x", 0), b.dims("x", 2, 4),
                                     b.dim("Bm", 3)))
    final, y = scan(b, [h0], [decay, drive, c], _step, [1, 1, 1], [1], 1)
    if given["D"]:
        y = b.op("Add", y, b.op("Mul", b.unsqueeze("D", 1), "x"))
    if given["z"]:
        y = b.op("Mul", y, b.silu("z"))
    b.op_into("Identity", [y], ["y"])
    b.op_into("Identity", [final], ["present_state"])


SPEC = OpSpec("SSD", ("x", "dt", "A", "Bm", "Cm", "D", "z", "dt_bias",
                      "past_state"), ("y", "present_state"), build_ssd)
_OP = SeqrtOp(SPEC, ssd_eager)


def ssd(x, dt, A, Bm, Cm, D=None, z=None, dt_bias=None, past_state=None, *,
        dt_softplus: bool = True, dt_min: float = 0.0, dt_max: float = math.inf,
        chunk_size: int = 256):
    """seqrt::SSD. Returns (y, present_state)."""
    attrs = {"dt_softplus": int(dt_softplus), "dt_min": float(dt_min),
             "dt_max": float(dt_max), "chunk_size": int(chunk_size)}
    return _OP([x, dt, A, Bm, Cm, D, z, dt_bias, past_state], attrs)
