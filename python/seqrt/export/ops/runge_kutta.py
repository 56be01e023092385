"""seqrt::RungeKutta (OPS.md): one explicit Runge-Kutta step of a body F
(an ODE-Transformer block): euler, rk2, rk2_gated, rk4."""

from typing import Callable

import torch
from onnx import helper

from .._body import Body, graph_attribute_ref
from .._session import OpCall
from ._op import OpSpec, SeqrtOp

METHODS = ("euler", "rk2", "rk2_gated", "rk4")


def runge_kutta_eager(y, gate_weight=None, gate_bias=None, *, method: str,
                      body: Callable):
    f1 = body(y)
    if method == "euler":
        return y + f1
    if method == "rk4":
        f2 = body(y + 0.5 * f1)
        f3 = body(y + 0.5 * f2)
        f4 = body(y + f3)
        return y + (f1 + 2.0 * f2 + 2.0 * f3 + f4) / 6.0
    f2 = body(y + f1)
    if method == "rk2":
        return y + 0.5 * (f1 + f2)
    if method == "rk2_gated":
        if gate_weight is None or gate_bias is None:
            raise ValueError("[RungeKutta] rk2_gated needs gate_weight and gate_bias")
        g = torch.sigmoid(torch.matmul(torch.cat([f1, f2], dim=-1), gate_weight)
                          + gate_bias)[..., None]
        return y + g * f1 + (1.0 - g) * f2
    raise ValueError(f"[RungeKutta] method must be one of {METHODS}, got {method!r}")


def _stage(b: Body, x: str) -> str:
    """F(x): the node's `body` graph run as a Scan body over a length-1 axis
    (one scan input, one scan output, no state), so the function can call
    the graph attribute it is given."""
    node_out = b.fresh("scan")
    b.nodes.append(_scan_node(b.unsqueeze(x, 0), node_out))
    return b.squeeze(node_out, 0)


def _scan_node(x: str, out: str):
    node = helper.make_node("Scan", [x], [out], num_scan_inputs=1)
    node.attribute.append(graph_attribute_ref("body", "body"))
    return node


def build_runge_kutta(call: OpCall, b: Body) -> None:
    method = call.attrs["method"]
    y = "y"
    half, two, sixth = b.const(0.5), b.const(2.0), b.const(1.0 / 6.0)
    f1 = _stage(b, y)
    if method == "euler":
        b.op_into("Add", [y, f1], ["y_next"])
        return
    if method == "rk4":
        f2 = _stage(b, b.op("Add", y, b.op("Mul", half, f1)))
        f3 = _stage(b, b.op("Add", y, b.op("Mul", half, f2)))
        f4 = _stage(b, b.op("Add", y, f3))
        inner = b.op("Add", b.op("Add", f1, f4),
                     b.op("Mul", two, b.op("Add", f2, f3)))
        b.op_into("Add", [y, b.op("Mul", sixth, inner)], ["y_next"])
        return
    f2 = _stage(b, b.op("Add", y, f1))
    if method == "rk2":
        b.op_into("Add", [y, b.op("Mul", half, b.op("Add", f1, f2))], ["y_next"])
        return
    logits = b.op("Add", b.op("MatMul", b.op("Concat", f1, f2, axis=-1),
                              "gate_weight"), "gate_bias")
    g = b.unsqueeze(b.op("Sigmoid", logits), -1)
    mixed = b.op("Add", b.op("Mul", g, f1),
                 b.op("Mul", b.op("Sub", b.const(1.0), g), f2))
    b.op_into("Add", [y, mixed], ["y_next"])


SPEC = OpSpec("RungeKutta", ("y", "gate_weight", "gate_bias"), ("y_next",),
              build_runge_kutta)
_OP = SeqrtOp(SPEC, runge_kutta_eager)


def runge_kutta(body: torch.nn.Module, y, gate_weight=None, gate_bias=None, *,
                method: str = "rk4"):
    """seqrt::RungeKutta: one step of `method` with F = `body` (a module
    mapping y to a tensor of y's shape; its weights are shared by all
    stages). Returns y_next."""
    if method not in METHODS:
        raise ValueError(f"[RungeKutta] method must be one of {METHODS}, got {method!r}")
    return _OP([y, gate_weight, gate_bias], {"method": method}, body=body)
