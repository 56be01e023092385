"""seqrt::Attention (OPS.md): softmax or sigmoid scores, causal and window
masks with bottom-right aligned positions, GQA, KV cache."""

import math
from typing import Optional

import torch

from .._body import Body
from .._session import OpCall
from ._op import OpSpec, SeqrtOp

_NEG_INF = float("-inf")


def _visible(tq: int, ttot: int, is_causal: int, window_left: int,
             window_right: int, device) -> Optional[torch.Tensor]:
    """(Tq, Ttot) bool: query i sits at position Ttot − Tq + i."""
    if not is_causal and window_left < 0 and window_right < 0:
        return None
    rows = torch.arange(tq, device=device) + (ttot - tq)
    diff = rows[:, None] - torch.arange(ttot, device=device)[None, :]
    visible = torch.ones(tq, ttot, dtype=torch.bool, device=device)
    if is_causal:
        visible &= diff >= 0
    if window_left >= 0:
        visible &= diff <= window_left
    if window_right >= 0:
        visible &= -diff <= window_right
    return visible


def _repeat_heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    """(B,Hkv,T,d) → (B,Hq,T,d): query head h reads kv head h / (Hq/Hkv)."""
    b, hkv, t, d = x.shape
    return x[:, :, None].expand(b, hkv, heads // hkv, t, d).reshape(b, heads, t, d)


def attention_eager(q, k, v, attn_mask=None, past_key=None, past_value=None, *,
                    score: str = "softmax", scale: Optional[float] = None,
                    softcap: float = 0.0, is_causal: int = 0,
                    window_left: int = -1, window_right: int = -1,
                    sigmoid_bias: float = 0.0):
    if (past_key is None) != (past_value is None):
        raise ValueError("[Attention] past_key and past_value go together")
    if past_key is not None:
        k = torch.cat([past_key, k], dim=2)
        v = torch.cat([past_value, v], dim=2)
    present_key, present_value = k, v
    hq = q.shape[1]
    if hq % k.shape[1] != 0:
        raise ValueError(f"[Attention] Hq={hq} is not a multiple of "
                         f"Hkv={k.shape[1]}")
    k4, v4 = _repeat_heads(k, hq), _repeat_heads(v, hq)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    s = torch.matmul(q, k4.transpose(-1, -2)) * scale
    if softcap > 0.0:
        s = softcap * torch.tanh(s / softcap)
    visible = _visible(q.shape[2], k.shape[2], is_causal, window_left,
                       window_right, q.device)
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            visible = attn_mask if visible is None else visible & attn_mask
        else:
            s = s + attn_mask
    if score == "sigmoid":
        p = torch.sigmoid(s + sigmoid_bias)
        if visible is not None:
            p = torch.where(visible, p, torch.zeros_like(p))
    elif score == "softmax":
        if visible is not None:
            s = torch.where(visible, s, torch.full_like(s, _NEG_INF))
        m = s.amax(dim=-1, keepdim=True)
        m = torch.where(m == _NEG_INF, torch.zeros_like(m), m)
        e = torch.exp(s - m)
        z = e.sum(dim=-1, keepdim=True)
        p = e / torch.where(z > 0, z, torch.ones_like(z))
    else:
        raise ValueError(f"[Attention] score must be softmax or sigmoid, "
                         f"got {score!r}")
    return torch.matmul(p, v4), present_key, present_value


def _repeat_heads_onnx(b: Body, x: str, q: str) -> str:
    hkv = b.dim(x, 1)
    ratio = b.op("Div", b.dim(q, 1), hkv)
    expanded = b.op("Expand", b.unsqueeze(x, 2),
                    b.concat_shape(b.dims(x, 0, 2), ratio, b.dims(x, 2, 4)))
    return b.op("Reshape", expanded,
                b.concat_shape(b.dims(q, 0, 2), b.dims(x, 2, 4)))


def _visible_onnx(b: Body, q: str, k: str, attrs) -> Optional[str]:
    conds = []
    tq = b.squeeze(b.dim(q, 2), 0)
    ttot = b.squeeze(b.dim(k, 2), 0)
    zero, one = b.const(0, "int64"), b.const(1, "int64")
    rows = b.op("Add", b.op("Range", zero, tq, one), b.op("Sub", ttot, tq))
    diff = b.op("Sub", b.unsqueeze(rows, 1),
                b.unsqueeze(b.op("Range", zero, ttot, one), 0))
    if attrs.get("is_causal", 0):
        conds.append(b.op("GreaterOrEqual", diff, zero))
    if attrs.get("window_left", -1) >= 0:
        conds.append(b.op("LessOrEqual", diff,
                          b.const(attrs["window_left"], "int64")))
    if attrs.get("window_right", -1) >= 0:
        conds.append(b.op("LessOrEqual", b.op("Neg", diff),
                          b.const(attrs["window_right"], "int64")))
    if not conds:
        return None
    visible = conds[0]
    for c in conds[1:]:
        visible = b.op("And", visible, c)
    return visible


def _softmax_onnx(b: Body, s: str, visible: Optional[str]) -> str:
    neg_inf = b.const(_NEG_INF)
    if visible is not None:
        s = b.op("Where", visible, s, neg_inf)
    m = b.reduce("ReduceMax", s, -1, keepdims=1)
    zero = b.const(0.0)
    m = b.op("Where", b.op("Equal", m, neg_inf), zero, m)
    e = b.op("Exp", b.op("Sub", s, m))
    z = b.reduce_sum(e, -1, keepdims=1)
    z = b.op("Where", b.op("Greater", z, zero), z, b.const(1.0))
    return b.op("Div", e, z)


def build_attention(call: OpCall, b: Body) -> None:
    given = dict(zip(SPEC.inputs, call.present))
    a = call.attrs
    k, v = "K", "V"
    if given["past_key"]:
        k = b.op("Concat", "past_key", k, axis=2)
        v = b.op("Concat", "past_value", v, axis=2)
    b.op_into("Identity", [k], ["present_key"])
    b.op_into("Identity", [v], ["present_value"])
    k4, v4 = _repeat_heads_onnx(b, k, "Q"), _repeat_heads_onnx(b, v, "Q")
    if "scale" in a:
        scale = b.const(a["scale"])
    else:
        width = b.op("Cast", b.dim("Q", 3), to=1)
        scale = b.op("Reciprocal", b.op("Sqrt", width))
    s = b.op("Mul", b.op("MatMul", "Q", b.op("Transpose", k4, perm=[0, 1, 3, 2])),
             scale)
    if a.get("softcap", 0.0) > 0.0:
        cap = b.const(a["softcap"])
        s = b.op("Mul", cap, b.op("Tanh", b.op("Div", s, cap)))
    visible = _visible_onnx(b, "Q", k, a)
    if given["attn_mask"]:
        if call.config == ("bool_mask",):
            visible = ("attn_mask" if visible is None else
                       b.op("And", visible, "attn_mask"))
        else:
            s = b.op("Add", s, "attn_mask")
    if a.get("score", "softmax") == "sigmoid":
        p = b.op("Sigmoid", b.op("Add", s, b.const(a.get("sigmoid_bias", 0.0))))
        if visible is not None:
            p = b.op("Where", visible, p, b.const(0.0))
    else:
        p = _softmax_onnx(b, s, visible)
    b.op_into("MatMul", [p, v4], ["Y"])


SPEC = OpSpec("Attention",
              ("Q", "K", "V", "attn_mask", "past_key", "past_value"),
              ("Y", "present_key", "present_value"), build_attention)
_OP = SeqrtOp(SPEC, attention_eager)


def attention(q, k, v, attn_mask=None, past_key=None, past_value=None, *,
              score: str = "softmax", scale: Optional[float] = None,
              softcap: float = 0.0, is_causal: bool = False,
              window_left: int = -1, window_right: int = -1,
              sigmoid_bias: float = 0.0):
    """seqrt::Attention. Returns (Y, present_key, present_value)."""
    attrs = {"score": score, "scale": None if scale is None else float(scale),
             "softcap": float(softcap), "is_causal": int(is_causal),
             "window_left": int(window_left), "window_right": int(window_right),
             "sigmoid_bias": float(sigmoid_bias)}
    config = ()
    if attn_mask is not None:
        config = ("bool_mask",) if attn_mask.dtype == torch.bool else ("float_mask",)
    return _OP([q, k, v, attn_mask, past_key, past_value], attrs, config)
