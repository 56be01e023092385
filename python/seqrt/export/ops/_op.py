"""How a seqrt op is one PyTorch function in eager mode and one node in ONNX.

Eager calls run the op's plain PyTorch math (differentiable). During
`torch.onnx.export` the call goes through a `torch.autograd.Function` whose
`symbolic()` writes a `seqrt::<op>` node (see `_session.py`).
"""

import dataclasses
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

import torch

from .. import _session
from .._body import Body


@dataclasses.dataclass(frozen=True)
class OpSpec:
    """One seqrt op: its ONNX signature and how to define it in ONNX ops."""

    name: str
    inputs: Tuple[str, ...]  # formal names, OPS.md order
    outputs: Tuple[str, ...]
    # build(call, body) adds nodes defining the outputs (formal names) from
    # the formal inputs that `call.present` marks as given.
    build: Callable[[_session.OpCall, Body], None]


def _as_tuple(outputs):
    return outputs if isinstance(outputs, tuple) else (outputs,)


def _function_class(spec: OpSpec, eager: Callable):
    # `seen` is a dict that forward() (run while tracing) fills with the
    # outputs' sizes, so symbolic() can type its outputs (the exporter's
    # shape inference knows nothing of seqrt ops), and, for a body, with an
    # example input to export the body with.
    def forward(ctx, attrs, config, body, seen, *inputs):
        kwargs = dict(attrs)
        if body is not None:
            kwargs["body"] = body
        # The node stands for the whole computation: nothing inside (a body
        # module's calls included) may be recorded by the tracer.
        tracing = torch._C._get_tracing_state()
        torch._C._set_tracing_state(None)
        try:
            outputs = eager(*inputs, **kwargs)
        finally:
            torch._C._set_tracing_state(tracing)
        seen["shapes"] = [list(o.shape) for o in _as_tuple(outputs)]
        seen["example"] = torch.zeros_like(inputs[0])
        return outputs

    def symbolic(g, attrs, config, body, seen, *inputs):
        extra = {}
        if body is not None:
            extra = {"body_module": body, "body_example": seen["example"]}
        outputs = _session.emit(g, spec.name, inputs, dict(attrs),
                                len(spec.outputs), config, **extra)
        like = inputs[0].type()
        for value, shape in zip(_as_tuple(outputs), seen["shapes"]):
            value.setType(like.with_sizes(shape))
        return outputs

    return type(spec.name + "Function", (torch.autograd.Function,), {
        "forward": staticmethod(forward),
        "symbolic": staticmethod(symbolic),
    })


class SeqrtOp:
    """Calls `eager` directly, or through the exportable Function."""

    def __init__(self, spec: OpSpec, eager: Callable):
        self.spec = spec
        self.eager = eager
        self.function = _function_class(spec, eager)

    def __call__(self, inputs: Sequence[Any], attrs: Dict[str, Any],
                 config: Tuple = (), body: Optional[torch.nn.Module] = None):
        if len(inputs) != len(self.spec.inputs):
            raise ValueError(f"[{self.spec.name}] takes {len(self.spec.inputs)} "
                             f"inputs, got {len(inputs)}")
        attrs = {k: v for k, v in attrs.items() if v is not None}
        if torch.onnx.is_in_onnx_export():
            return self.function.apply(tuple(attrs.items()), config, body, {},
                                       *inputs)
        if body is not None:
            attrs["body"] = body
        return self.eager(*inputs, **attrs)
