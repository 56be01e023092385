"""Turns the exported ModelProto's tagged seqrt nodes into final ones and adds
the ONNX functions that define them (see `_session.py`)."""

from typing import Callable, Dict, List, Tuple

import onnx
from onnx import helper

from ._body import Body
from ._session import CALL_ATTRIBUTE, OpCall, Session
from .ops import SPECS

DOMAIN = "seqrt"


def _nodes_recursive(graph: onnx.GraphProto):
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _nodes_recursive(attr.g)
            for sub in attr.graphs:
                yield from _nodes_recursive(sub)


def _pop_call_key(node: onnx.NodeProto) -> str:
    for i, attr in enumerate(node.attribute):
        if attr.name == CALL_ATTRIBUTE:
            key = attr.s.decode()
            del node.attribute[i]
            return key
    raise ValueError(f"[seqrt.export] node {node.name} ({node.op_type}) was "
                     "not written by seqrt.export")


def _place_inputs(node: onnx.NodeProto, call: OpCall) -> None:
    """Omitted optional inputs become empty names; trailing ones are dropped."""
    given = iter(list(node.input))
    names = [next(given) if present else "" for present in call.present]
    while names and not names[-1]:
        names.pop()
    del node.input[:]
    node.input.extend(names)


class Finisher:
    def __init__(self, session: Session, opset: int,
                 export_body: Callable[[OpCall, str], onnx.GraphProto]):
        self.session = session
        self.opset = opset
        self.export_body = export_body
        # signature -> (call, nodes using it)
        self.functions: Dict[Tuple, Tuple[OpCall, List[onnx.NodeProto]]] = {}

    def finish_graph(self, graph: onnx.GraphProto) -> None:
        for node in list(_nodes_recursive(graph)):
            if node.domain != DOMAIN:
                continue
            call = self.session.calls[_pop_call_key(node)]
            _place_inputs(node, call)
            if call.body_module is not None:
                body = self.export_body(call, f"{node.name or call.op}_body")
                self.finish_graph(body)
                node.attribute.append(helper.make_attribute("body", body))
            entry = self.functions.setdefault(call.signature(), (call, []))
            entry[1].append(node)

    def make_functions(self) -> Tuple[List[onnx.FunctionProto], bool]:
        """One function per distinct signature; overloads when an op has several."""
        per_op: Dict[str, int] = {}
        for call, _ in self.functions.values():
            per_op[call.op] = per_op.get(call.op, 0) + 1
        functions, seen, overloaded = [], {}, False
        for call, nodes in self.functions.values():
            spec = SPECS[call.op]
            overload = ""
            if per_op[call.op] > 1:
                seen[call.op] = seen.get(call.op, 0) + 1
                overload = f"v{seen[call.op]}"
                overloaded = True
                for node in nodes:
                    node.overload = overload
            body = Body(f"{call.op}{overload}", self.opset)
            spec.build(call, body)
            attributes, opsets = [], [helper.make_opsetid("", self.opset)]
            if call.body_module is not None:
                # The body graph it is given may call seqrt ops itself.
                attributes = ["body"]
                opsets.append(helper.make_opsetid(DOMAIN, 1))
            functions.append(helper.make_function(
                DOMAIN, call.op, list(spec.inputs), list(spec.outputs),
                body.nodes, opsets,
                attributes=attributes, overload=overload or None))
        return functions, overloaded
