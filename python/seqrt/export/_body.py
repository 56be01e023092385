"""A small builder for ONNX node lists: function bodies and Scan bodies.

Every value gets a fresh name from one counter, so bodies built by one
builder (a function and the Scan bodies inside it) never clash.
"""

from typing import List, Optional, Sequence, Union

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

Name = str


class Body:
    """Collects the nodes of one ONNX graph scope."""

    def __init__(self, prefix: str, opset: int,
                 counter: Optional[List[int]] = None):
        self.prefix = prefix
        self.opset = opset
        self.nodes: List[onnx.NodeProto] = []
        self._counter = counter if counter is not None else [0]

    def fresh(self, hint: str = "t") -> Name:
        self._counter[0] += 1
        return f"{self.prefix}_{hint}{self._counter[0]}"

    def child(self, prefix: str) -> "Body":
        """A builder for a nested graph (a Scan body) sharing the counter."""
        return Body(f"{self.prefix}_{prefix}", self.opset, self._counter)

    def op(self, op_type: str, *inputs: Name, outputs: int = 1,
           **attrs) -> Union[Name, tuple]:
        names = [self.fresh(op_type.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), names, **attrs))
        return names[0] if outputs == 1 else tuple(names)

    def op_into(self, op_type: str, inputs: Sequence[Name],
                outputs: Sequence[Name], **attrs) -> None:
        """A node writing to given names (a body's declared outputs)."""
        self.nodes.append(
            helper.make_node(op_type, list(inputs), list(outputs), **attrs))

    def const(self, value, dtype=np.float32) -> Name:
        name = self.fresh("c")
        array = np.asarray(value, dtype=dtype)
        self.nodes.append(
            helper.make_node("Constant", [], [name],
                             value=numpy_helper.from_array(array, name)))
        return name

    def ints(self, *values: int) -> Name:
        """A 1-D int64 constant (axes, shapes, slice bounds)."""
        return self.const(list(values), np.int64)

    # Shapes -----------------------------------------------------------
    def dim(self, x: Name, axis: int) -> Name:
        """Size of one axis of x as a 1-D int64 tensor of length 1."""
        shape = self.op("Shape", x)
        return self.op("Slice", shape, self.ints(axis), self.ints(axis + 1))

    def dims(self, x: Name, start: int, end: int) -> Name:
        shape = self.op("Shape", x)
        return self.op("Slice", shape, self.ints(start), self.ints(end))

    def concat_shape(self, *parts: Name) -> Name:
        return self.op("Concat", *parts, axis=0)

    # Common math ------------------------------------------------------
    def unsqueeze(self, x: Name, *axes: int) -> Name:
        return self.op("Unsqueeze", x, self.ints(*axes))

    def squeeze(self, x: Name, *axes: int) -> Name:
        return self.op("Squeeze", x, self.ints(*axes))

    def reduce(self, op_type: str, x: Name, axis: int,
               keepdims: int = 0) -> Name:
        # Axes became an input of ReduceSum in opset 13, of the others in 18.
        if op_type == "ReduceSum" or self.opset >= 18:
            return self.op(op_type, x, self.ints(axis), keepdims=keepdims)
        return self.op(op_type, x, axes=[axis], keepdims=keepdims)

    def reduce_sum(self, x: Name, axis: int, keepdims: int = 0) -> Name:
        return self.reduce("ReduceSum", x, axis, keepdims)

    def softplus_thresholded(self, x: Name) -> Name:
        """log1p(exp x) for x ≤ 20, else x (the reference's threshold)."""
        big = self.op("Greater", x, self.const(20.0))
        return self.op("Where", big, x, self.op("Softplus", x))

    def silu(self, x: Name) -> Name:
        return self.op("Mul", x, self.op("Sigmoid", x))

    def zeros(self, shape: Name) -> Name:
        return self.op("ConstantOfShape", shape,
                       value=helper.make_tensor("z", TensorProto.FLOAT, [1], [0.0]))


def value_info(name: Name, elem_type: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    """A typed value with unknown shape (Scan body inputs and outputs)."""
    return helper.make_tensor_value_info(name, elem_type, None)


def graph_attribute_ref(name: str, ref: str) -> onnx.AttributeProto:
    """A graph attribute that takes the calling node's attribute `ref`."""
    attr = onnx.AttributeProto()
    attr.name = name
    attr.ref_attr_name = ref
    attr.type = onnx.AttributeProto.GRAPH
    return attr


def scan(b: Body, states: Sequence[Name], scan_inputs: Sequence[Name], step,
         input_axes: Sequence[int], output_axes: Sequence[int],
         num_outputs: int, state_types: Optional[Sequence[int]] = None):
    """An ONNX Scan whose body `step(body, states, slices)` returns
    (new states, per-step outputs). Returns the Scan's output names: the
    final states, then the stacked per-step outputs.

    The body reads nothing from enclosing scopes: whatever it needs is a
    state or a scan input, so inlining the function can rename freely.
    """
    sub = b.child("scan")
    types = list(state_types or [TensorProto.FLOAT] * len(states))
    s_in = [sub.fresh("s") for _ in states]
    x_in = [sub.fresh("x") for _ in scan_inputs]
    s_out, y_out = step(sub, s_in, x_in)
    outs = []
    for name in list(s_out) + list(y_out):
        out = sub.fresh("o")
        sub.op_into("Identity", [name], [out])
        outs.append(out)
    out_types = types + [TensorProto.FLOAT] * len(y_out)
    graph = helper.make_graph(
        sub.nodes, sub.prefix,
        [value_info(n, t) for n, t in zip(s_in, types)] +
        [value_info(n) for n in x_in],
        [value_info(n, t) for n, t in zip(outs, out_types)])
    result = b.op("Scan", *states, *scan_inputs,
                  outputs=len(states) + num_outputs, body=graph,
                  num_scan_inputs=len(scan_inputs),
                  scan_input_axes=list(input_axes),
                  scan_output_axes=list(output_axes))
    return result if isinstance(result, tuple) else (result,)
