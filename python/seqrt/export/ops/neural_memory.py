"""seqrt::NeuralMemory (OPS.md): Titans' long-term memory, a small MLP per
(batch, head) trained by momentum SGD with forgetting while it reads the
sequence. The gradient of token t is taken at the anchor weights, the
weights at the start of its chunk (chunks aligned to absolute positions)."""

import math
from typing import List

import torch
from onnx import TensorProto, helper

from .._body import Body, scan
from .._session import OpCall
from ._op import OpSpec, SeqrtOp

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _act(x, gelu: bool):
    if gelu:
        return 0.5 * x * (1.0 + torch.erf(x * _SQRT_HALF))
    return x * torch.sigmoid(x)


def _act_grad(x, gelu: bool):
    if gelu:
        return (0.5 * (1.0 + torch.erf(x * _SQRT_HALF)) +
                x * _INV_SQRT_2PI * torch.exp(-0.5 * x * x))
    s = torch.sigmoid(x)
    return s * (1.0 + x * (1.0 - s))


def _forward(w: List[torch.Tensor], x, gelu: bool):
    """M(x) for rows x (B,H,1,d)."""
    if len(w) == 1:
        return torch.matmul(x, w[0])
    return torch.matmul(_act(torch.matmul(x, w[0]), gelu), w[1])


def _gradient(w: List[torch.Tensor], k, v, gelu: bool) -> List[torch.Tensor]:
    """∇ of Σ (M(k) − v)² for rows k, v (B,H,1,d)."""
    kt = k.transpose(-1, -2)
    if len(w) == 1:
        return [2.0 * torch.matmul(kt, torch.matmul(k, w[0]) - v)]
    h = torch.matmul(k, w[0])
    a = _act(h, gelu)
    r = 2.0 * (torch.matmul(a, w[1]) - v)
    g1 = torch.matmul(kt, torch.matmul(r, w[1].transpose(-1, -2)) * _act_grad(h, gelu))
    return [g1, torch.matmul(a.transpose(-1, -2), r)]


def _unpack(state, shapes):
    """(B,H,3P) → weights, momentum, anchor (lists of (B,H,·,·))."""
    bsz, heads = state.shape[:2]
    parts, offset = [], 0
    for _ in range(3):
        group = []
        for rows, cols in shapes:
            size = rows * cols
            group.append(state[:, :, offset:offset + size].reshape(bsz, heads, rows, cols))
            offset += size
        parts.append(group)
    return parts


def neural_memory_eager(q, k, v, theta, eta, alpha, W1, W2=None,
                        past_state=None, position=None, *, depth: int = 2,
                        activation: str = "gelu", chunk_size: int = 1,
                        retrieve: str = "after_update"):
    bsz, heads, length, d = q.shape
    gelu = activation == "gelu"
    params = [W1] if depth == 1 else [W1, W2]
    if past_state is not None:
        w, s, anchor = _unpack(past_state, [tuple(p.shape[1:]) for p in params])
    else:
        w = [p[None].expand(bsz, *p.shape).clone() for p in params]
        s = [torch.zeros_like(x) for x in w]
        anchor = list(w)
    pos = position if position is not None else torch.zeros(bsz, dtype=torch.int64)
    ys = []
    for t in range(length):
        start = ((pos + t) % chunk_size == 0).view(bsz, 1, 1, 1)
        anchor = [torch.where(start, wi, ai) for wi, ai in zip(w, anchor)]
        qt, kt, vt = (x[:, :, t, None, :] for x in (q, k, v))
        if retrieve == "before_update":
            ys.append(_forward(w, qt, gelu))
        grads = _gradient(anchor, kt, vt, gelu)
        e, th, al = (x[:, :, t, None, None] for x in (eta, theta, alpha))
        s = [e * si - th * gi for si, gi in zip(s, grads)]
        w = [(1.0 - al) * wi + si for wi, si in zip(w, s)]
        if retrieve != "before_update":
            ys.append(_forward(w, qt, gelu))
    y = torch.cat(ys, dim=2)
    flat = [x.reshape(bsz, heads, -1) for x in w + s + anchor]
    return y, torch.cat(flat, dim=2)


# ONNX ----------------------------------------------------------------------

def _act_onnx(b: Body, x: str, gelu: bool) -> str:
    if gelu:
        erf = b.op("Erf", b.op("Mul", x, b.const(_SQRT_HALF)))
        return b.op("Mul", b.op("Mul", b.const(0.5), x),
                    b.op("Add", b.const(1.0), erf))
    return b.silu(x)


def _act_grad_onnx(b: Body, x: str, gelu: bool) -> str:
    if gelu:
        cdf = b.op("Mul", b.const(0.5), b.op("Add", b.const(1.0), b.op(
            "Erf", b.op("Mul", x, b.const(_SQRT_HALF)))))
        pdf = b.op("Mul", b.const(_INV_SQRT_2PI),
                   b.op("Exp", b.op("Mul", b.const(-0.5), b.op("Mul", x, x))))
        return b.op("Add", cdf, b.op("Mul", x, pdf))
    sig = b.op("Sigmoid", x)
    return b.op("Mul", sig, b.op("Add", b.const(1.0), b.op(
        "Mul", x, b.op("Sub", b.const(1.0), sig))))


def _transpose(b: Body, x: str) -> str:
    return b.op("Transpose", x, perm=[0, 1, 3, 2])


def _forward_onnx(b: Body, w, x: str, gelu: bool) -> str:
    if len(w) == 1:
        return b.op("MatMul", x, w[0])
    return b.op("MatMul", _act_onnx(b, b.op("MatMul", x, w[0]), gelu), w[1])


def _gradient_onnx(b: Body, w, k: str, v: str, gelu: bool):
    kt = _transpose(b, k)
    two = b.const(2.0)
    if len(w) == 1:
        err = b.op("Sub", b.op("MatMul", k, w[0]), v)
        return [b.op("Mul", two, b.op("MatMul", kt, err))]
    h = b.op("MatMul", k, w[0])
    a = _act_onnx(b, h, gelu)
    r = b.op("Mul", two, b.op("Sub", b.op("MatMul", a, w[1]), v))
    back = b.op("Mul", b.op("MatMul", r, _transpose(b, w[1])),
                _act_grad_onnx(b, h, gelu))
    return [b.op("MatMul", kt, back), b.op("MatMul", _transpose(b, a), r)]


def _step_builder(depth: int, chunk: int, gelu: bool, before: bool):
    def step(s: Body, states, slices):
        n = depth
        w, mom, anchor, pos = states[:n], states[n:2 * n], states[2 * n:3 * n], states[3 * n]
        q_t, k_t, v_t, theta_t, eta_t, alpha_t = slices
        start = s.op("Reshape", s.op("Equal", s.op("Mod", pos, s.const(chunk, "int64")),
                                     s.const(0, "int64")), s.ints(-1, 1, 1, 1))
        anchor = [s.op("Where", start, wi, ai) for wi, ai in zip(w, anchor)]
        q4, k4, v4 = (s.unsqueeze(x, 2) for x in (q_t, k_t, v_t))
        y_before = _forward_onnx(s, w, q4, gelu) if before else None
        grads = _gradient_onnx(s, anchor, k4, v4, gelu)
        eta4, theta4, alpha4 = (s.unsqueeze(x, 2, 3) for x in (eta_t, theta_t, alpha_t))
        keep = s.op("Sub", s.const(1.0), alpha4)
        mom = [s.op("Sub", s.op("Mul", eta4, mi), s.op("Mul", theta4, gi))
               for mi, gi in zip(mom, grads)]
        w = [s.op("Add", s.op("Mul", keep, wi), mi) for wi, mi in zip(w, mom)]
        y = y_before if before else _forward_onnx(s, w, q4, gelu)
        pos = s.op("Add", pos, s.const(1, "int64"))
        return w + mom + anchor + [pos], [s.squeeze(y, 2)]

    return step


def _initial_state(b: Body, call: OpCall, params: List[str]):
    """Weights, momentum and anchor (B,H,rows,cols) each, from past_state or W."""
    batch_heads = b.dims("q", 0, 2)
    if not call.present[8]:
        w = [b.op("Expand", b.unsqueeze(p, 0),
                  b.concat_shape(b.dim("q", 0), b.op("Shape", p))) for p in params]
        return w, [b.op("Sub", wi, wi) for wi in w], list(w)
    parts, offset = [], b.ints(0)
    for _ in range(3):
        for p in params:
            rows_cols = b.dims(p, 1, 3)
            size = b.op("ReduceProd", rows_cols, keepdims=1)
            end = b.op("Add", offset, size)
            flat = b.op("Slice", "past_state", offset, end, b.ints(2))
            parts.append(b.op("Reshape", flat, b.concat_shape(batch_heads, rows_cols)))
            offset = end
    n = len(params)
    return parts[:n], parts[n:2 * n], parts[2 * n:]


def build_neural_memory(call: OpCall, b: Body) -> None:
    a = call.attrs
    depth = a.get("depth", 2)
    params = ["W1"] if depth == 1 else ["W1", "W2"]
    w, mom, anchor = _initial_state(b, call, params)
    if call.present[9]:
        pos = "position"
    else:
        pos = b.op("ConstantOfShape", b.dim("q", 0), value=_int64_zero())
    step = _step_builder(depth, a.get("chunk_size", 1),
                         a.get("activation", "gelu") == "gelu",
                         a.get("retrieve", "after_update") == "before_update")
    n_states = 3 * depth + 1
    types = [TensorProto.FLOAT] * (3 * depth) + [TensorProto.INT64]
    outs = scan(b, w + mom + anchor + [pos],
                ["q", "k", "v", "theta", "eta", "alpha"], step,
                [2, 2, 2, 2, 2, 2], [2], 1, state_types=types)
    flat = [b.op("Reshape", x, b.concat_shape(b.dims("q", 0, 2), b.ints(-1)))
            for x in outs[:n_states - 1]]
    b.op_into("Concat", flat, ["present_state"], axis=2)
    b.op_into("Identity", [outs[-1]], ["y"])


def _int64_zero():
    return helper.make_tensor("zero", TensorProto.INT64, [1], [0])


SPEC = OpSpec("NeuralMemory",
              ("q", "k", "v", "theta", "eta", "alpha", "W1", "W2",
               "past_state", "position"), ("y", "present_state"),
              build_neural_memory)
_OP = SeqrtOp(SPEC, neural_memory_eager)


def neural_memory(q, k, v, theta, eta, alpha, W1, W2=None, past_state=None,
                  position=None, *, depth: int = 2, activation: str = "gelu",
                  chunk_size: int = 1, retrieve: str = "after_update"):
    """seqrt::NeuralMemory. Returns (y, present_state (B,H,3·P))."""
    attrs = {"depth": int(depth), "activation": activation,
             "chunk_size": int(chunk_size), "retrieve": retrieve}
    return _OP([q, k, v, theta, eta, alpha, W1, W2, past_state, position], attrs)
