// Writes ONNX's variadic elementwise ops out as chains of two-input ops,
// for backends whose elementwise kernels take two operands (Vulkan).
#pragma once

#include "graph/graph.h"
#include "graph/status.h"

namespace seqrt {

// Sum, and Max/Min of other than two inputs.
bool is_variadic_to_expand(const Node& node);

// Replaces those nodes of `graph` (not of its subgraphs): Sum(a, b, c) ->
// Add(Add(a, b), c), Max/Min likewise; a single input -> Identity. Outputs
// keep their values; the caller re-infers.
Result<bool> expand_variadic(Graph& graph);

}  // namespace seqrt
