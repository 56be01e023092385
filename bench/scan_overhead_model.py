"""Writes the per-iteration overhead case of issue 26 as plain ONNX: a Scan
over T steps whose body is one tiny Add of a carried state (16 floats) and
the step's scan input slice. The body's kernel costs next to nothing, so
`seqrt bench MODEL` divided by T is the loop executor's cost per iteration.

    python bench/scan_overhead_model.py out.onnx [--steps 10000]
    build/release/tools/seqrt bench out.onnx --repeat 5
"""

import argparse

import onnx
from onnx import TensorProto, helper

WIDTH = 16


def scan_overhead_model(steps: int) -> onnx.ModelProto:
    f32 = TensorProto.FLOAT
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "x"], ["s_next"])],
        "add_body",
        [
            helper.make_tensor_value_info("s", f32, [WIDTH]),
            helper.make_tensor_value_info("x", f32, [WIDTH]),
        ],
        [helper.make_tensor_value_info("s_next", f32, [WIDTH])],
    )
    scan = helper.make_node(
        "Scan", ["s0", "xs"], ["s_last"], body=body, num_scan_inputs=1
    )
    graph = helper.make_graph(
        [scan],
        "scan_overhead",
        [
            helper.make_tensor_value_info("s0", f32, [WIDTH]),
            helper.make_tensor_value_info("xs", f32, [steps, WIDTH]),
        ],
        [helper.make_tensor_value_info("s_last", f32, [WIDTH])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("output")
    parser.add_argument("--steps", type=int, default=10000)
    args = parser.parse_args()
    model = scan_overhead_model(args.steps)
    onnx.checker.check_model(model)
    onnx.save(model, args.output)


if __name__ == "__main__":
    main()
