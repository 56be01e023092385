"""seqrt::SelectiveScan (OPS.md): the Mamba-1 scan,
h_t = exp(Δ_t·A)·h_{t−1} + Δ_t·B_t·u_t, y_t = C_t·h_t + D·u_t (·silu z)."""

import torch

from .._body import Body, scan
from .._session import OpCall
from ._op import OpSpec, SeqrtOp


def softplus_thresholded(x):
    """log1p(exp x) for x ≤ 20, else x (the reference code's threshold)."""
    return torch.where(x <= 20.0, torch.log1p(torch.exp(x)), x)


def _groups_to_channels(m, channels: int):
    """(B,G,N,L) → (B,D,N,L): channel d reads group d / (D/G)."""
    b, g, n, l = m.shape
    return m[:, :, None].expand(b, g, channels // g, n, l).reshape(b, channels, n, l)


def selective_scan_eager(u, delta, A, Bm, Cm, Dskip=None, z=None,
                         delta_bias=None, past_state=None, *,
                         delta_softplus: int = 1):
    bsz, d, length = u.shape
    if delta_bias is not None:
        delta = delta + delta_bias[:, None]
    if delta_softplus:
        delta = softplus_thresholded(delta)
    bm = _groups_to_channels(Bm, d)
    cm = _groups_to_channels(Cm, d)
    h = past_state if past_state is not None else u.new_zeros(bsz, d, A.shape[1])
    ys = []
    for t in range(length):
        dt = delta[:, :, t, None]
        h = torch.exp(dt * A) * h + dt * bm[:, :, :, t] * u[:, :, t, None]
        ys.append((h * cm[:, :, :, t]).sum(-1))
    y = torch.stack(ys, dim=2)
    if Dskip is not None:
        y = y + Dskip[:, None] * u
    if z is not None:
        y = y * (z * torch.sigmoid(z))
    return y, h


def _groups_to_channels_onnx(b: Body, m: str) -> str:
    """(B,G,N,L) → (B,D,L,N), D from u."""
    per_group = b.op("Div", b.dim("u", 1), b.dim(m, 1))
    expanded = b.op("Expand", b.unsqueeze(m, 2),
                    b.concat_shape(b.dims(m, 0, 2), per_group, b.dims(m, 2, 4)))
    channels = b.op("Reshape", expanded,
                    b.concat_shape(b.dims("u", 0, 2), b.dims(m, 2, 4)))
    return b.op("Transpose", channels, perm=[0, 1, 3, 2])


def _step(s: Body, states, slices):
    (h,) = states
    decay, drive, c = slices
    h = s.op("Add", s.op("Mul", decay, h), drive)
    return [h], [s.reduce_sum(s.op("Mul", h, c), -1)]


def build_selective_scan(call: OpCall, b: Body) -> None:
    given = dict(zip(SPEC.inputs, call.present))
    delta = "delta"
    if given["delta_bias"]:
        delta = b.op("Add", delta, b.unsqueeze("delta_bias", 1))
    if call.attrs.get("delta_softplus", 1):
        delta = b.softplus_thresholded(delta)
    delta4 = b.unsqueeze(delta, 3)  # (B,D,L,1)
    decay = b.op("Exp", b.op("Mul", delta4, b.unsqueeze("A", 0, 2)))
    drive = b.op("Mul", b.op("Mul", delta4, b.unsqueeze("u", 3)),
                 _groups_to_channels_onnx(b, "Bm"))
    c = _groups_to_channels_onnx(b, "Cm")
    if given["past_state"]:
        h0 = "past_state"
    else:
        h0 = b.zeros(b.concat_shape(b.dims("u", 0, 2), b.dim("A", 1)))
    final, y = scan(b, [h0], [decay, drive, c], _step, [2, 2, 2], [2], 1)
    if given["Dskip"]:
        y = b.op("Add", y, b.op("Mul", b.unsqueeze("Dskip", 1), "u"))
    if given["z"]:
        y = b.op("Mul", y, b.silu("z"))
    b.op_into("Identity", [y], ["y"])
    b.op_into("Identity", [final], ["present_state"])


SPEC = OpSpec("SelectiveScan",
              ("u", "delta", "A", "Bm", "Cm", "Dskip", "z", "delta_bias",
               "past_state"), ("y", "present_state"), build_selective_scan)
_OP = SeqrtOp(SPEC, selective_scan_eager)


def selective_scan(u, delta, A, Bm, Cm, Dskip=None, z=None, delta_bias=None,
                   past_state=None, *, delta_softplus: bool = True):
    """seqrt::SelectiveScan. Returns (y, present_state)."""
    return _OP([u, delta, A, Bm, Cm, Dskip, z, delta_bias, past_state],
               {"delta_softplus": int(delta_softplus)})
