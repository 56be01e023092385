"""The calls of seqrt ops recorded while `seqrt.export.export` runs.

`torch.onnx.export` turns each seqrt op into a `seqrt::Op` node through the
op's `symbolic()`. ONNX nodes cannot leave an optional input out in the
middle from there, and a `RungeKutta` body is a PyTorch module, not yet a
graph. So `symbolic()` records the call here and tags the node with its key
(attribute `seqrt_call`); `export` then finishes every tagged node: empty
names for omitted inputs, the body graph, and the ONNX function that defines
the op in standard ops.
"""

import contextlib
import dataclasses
import threading
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

CALL_ATTRIBUTE = "seqrt_call"

_state = threading.local()


@dataclasses.dataclass
class OpCall:
    """One seqrt op node as `symbolic()` saw it."""

    op: str  # e.g. "Retention"
    attrs: Dict[str, Any]  # the node's ONNX attributes (Python values)
    present: Tuple[bool, ...]  # which of the op's inputs are given
    num_outputs: int
    # What the function body depends on besides attributes and present
    # inputs (e.g. whether a mask is bool or float). Hashable.
    config: Tuple = ()
    # RungeKutta only: the body module and an example input for it.
    body_module: Any = None
    body_example: Any = None

    def signature(self) -> Tuple:
        """Calls with equal signatures share one ONNX function."""
        attrs = tuple(sorted((k, _hashable(v)) for k, v in self.attrs.items()))
        return (self.op, attrs, self.present, self.config)


def _hashable(value):
    return tuple(value) if isinstance(value, list) else value


class Session:
    def __init__(self) -> None:
        self.calls: Dict[str, OpCall] = {}

    def add(self, call: OpCall) -> str:
        key = f"{call.op}#{len(self.calls)}"
        self.calls[key] = call
        return key


@contextlib.contextmanager
def active(session: Session) -> Iterator[Session]:
    previous = getattr(_state, "session", None)
    _state.session = session
    try:
        yield session
    finally:
        _state.session = previous


def current() -> Session:
    session = getattr(_state, "session", None)
    if session is None:
        raise RuntimeError(
            "seqrt ops export only through seqrt.export.export(...), which "
            "adds the ONNX functions that define them")
    return session


def _attribute_kwargs(attrs: Dict[str, Any]) -> Dict[str, Any]:
    """`g.op` keyword arguments: the name with a type suffix."""
    kwargs = {}
    for name, value in attrs.items():
        if isinstance(value, bool):
            kwargs[name + "_i"] = int(value)
        elif isinstance(value, int):
            kwargs[name + "_i"] = value
        elif isinstance(value, float):
            kwargs[name + "_f"] = value
        elif isinstance(value, str):
            kwargs[name + "_s"] = value
        elif isinstance(value, (list, tuple)) and all(
                isinstance(v, float) for v in value):
            kwargs[name + "_f"] = [float(v) for v in value]
        elif isinstance(value, (list, tuple)):
            kwargs[name + "_i"] = [int(v) for v in value]
        else:
            raise TypeError(f"[seqrt.export] attribute {name}: unsupported "
                            f"type {type(value).__name__}")
    return kwargs


def emit(g, op: str, inputs: Sequence[Optional[Any]], attrs: Dict[str, Any],
         num_outputs: int, config: Tuple = (), **extra):
    """Adds the `seqrt::<op>` node to the graph being exported."""
    call = OpCall(op=op, attrs=attrs,
                  present=tuple(v is not None for v in inputs),
                  num_outputs=num_outputs, config=config, **extra)
    key = current().add(call)
    kwargs = _attribute_kwargs(attrs)
    kwargs[CALL_ATTRIBUTE + "_s"] = key
    values: List[Any] = [v for v in inputs if v is not None]
    return g.op("seqrt::" + op, *values, outputs=num_outputs, **kwargs)
