"""`export`: PyTorch module → ONNX file with seqrt nodes and their functions."""

import inspect
import io
from typing import Any, Dict, Optional, Sequence

import onnx
import torch

from . import _session
from ._finish import DOMAIN, Finisher
from ._rename import prefix_graph_names

DEFAULT_OPSET = 17  # the newest opset torch 1.13's exporter writes


def _torch_export(module, args, f, opset: int, **kwargs) -> None:
    options = dict(opset_version=opset, custom_opsets={DOMAIN: 1},
                   do_constant_folding=True)
    options.update(kwargs)
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        options["dynamo"] = False  # the TorchScript exporter runs symbolic()
    torch.onnx.export(module, args, f, **options)


def _export_body(opset: int):
    def export_body(call: _session.OpCall, prefix: str) -> onnx.GraphProto:
        """The RungeKutta body F as a graph with one input and one output.

        Its weights stay initializers of the body graph; its names get a
        prefix so they never shadow the enclosing graph's names.
        """
        buffer = io.BytesIO()
        _torch_export(call.body_module, (call.body_example,), buffer, opset,
                      input_names=["y"], output_names=["f"])
        graph = onnx.load_from_string(buffer.getvalue()).graph
        prefix_graph_names(graph, prefix.replace("/", "_") + "/")
        graph.name = prefix
        return graph

    return export_body


def export(module: torch.nn.Module, args: Any, path: Optional[str] = None, *,
           input_names: Optional[Sequence[str]] = None,
           output_names: Optional[Sequence[str]] = None,
           dynamic_axes: Optional[Dict[str, Dict[int, str]]] = None,
           opset_version: int = DEFAULT_OPSET,
           check: bool = True) -> onnx.ModelProto:
    """Exports `module(*args)` to ONNX (and writes it to `path` if given).

    Each seqrt op becomes a node in the `seqrt` domain, and the model gets a
    local ONNX function of the same domain and name that defines the op in
    standard ONNX ops, so onnxruntime runs the file by inlining it while
    seqrt runs its fused kernel.
    """
    if not isinstance(args, tuple):
        args = (args,)
    session = _session.Session()
    buffer = io.BytesIO()
    with _session.active(session):
        # Not under no_grad: torch 1.13's nn.TransformerEncoderLayer would
        # take its fused fast path, which has no ONNX export.
        _torch_export(module, args, buffer, opset_version,
                      input_names=list(input_names or []) or None,
                      output_names=list(output_names or []) or None,
                      dynamic_axes=dynamic_axes)
        model = onnx.load_from_string(buffer.getvalue())
        finisher = Finisher(session, opset_version, _export_body(opset_version))
        finisher.finish_graph(model.graph)
    functions, overloaded = finisher.make_functions()
    model.functions.extend(functions)
    if functions and not any(o.domain == DOMAIN for o in model.opset_import):
        model.opset_import.append(onnx.helper.make_opsetid(DOMAIN, 1))
    if overloaded:
        model.ir_version = max(model.ir_version, 10)  # overloads came in IR 10
    if check:
        onnx.checker.check_model(model)
    if path is not None:
        onnx.save(model, path)
    return model
