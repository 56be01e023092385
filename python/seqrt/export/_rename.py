"""Prefixing every name a graph defines (for graphs nested in other graphs)."""

from typing import Dict

import onnx


def _replace(field, values) -> None:
    del field[:]
    field.extend(values)


def _rename_scope(graph: onnx.GraphProto, outer: Dict[str, str],
                  prefix: str) -> None:
    names = dict(outer)
    for value in list(graph.input) + list(graph.initializer):
        names[value.name] = prefix + value.name
    for node in graph.node:
        for out in node.output:
            if out:
                names[out] = prefix + out
    for value in graph.input:
        value.name = names[value.name]
    for init in graph.initializer:
        init.name = names[init.name]
    for node in graph.node:
        _replace(node.input, [names.get(n, n) for n in node.input])
        _replace(node.output, [names.get(n, n) for n in node.output])
        if node.name:
            node.name = prefix + node.name
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                _rename_scope(attr.g, names, prefix)
            for sub in attr.graphs:
                _rename_scope(sub, names, prefix)
    for value in list(graph.output) + list(graph.value_info):
        value.name = names.get(value.name, value.name)


def prefix_graph_names(graph: onnx.GraphProto, prefix: str) -> None:
    _rename_scope(graph, {}, prefix)
