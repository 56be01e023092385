// Writes ONNX Einsum nodes of three or more operands out as chains of
// two-operand Einsums, for backends whose Einsum kernel takes at most two
// operands (Vulkan).
#pragma once

#include "graph/graph.h"
#include "graph/status.h"

namespace seqrt {

// Einsum with three or more operands.
bool is_einsum_to_expand(const Node& node);

// Replaces those nodes of `graph` (not of its subgraphs) with chains of
// two-operand Einsums: "ij,jk,kl->il" -> "ij,jk->ik" then "ik,kl->il".
// Operands are contracted left to right; each intermediate keeps only the
// labels that a later operand or the output still needs, so every other
// label is summed at the first step that sees it. A node whose equation
// does not parse is left for the op's own checks to report. Outputs keep
// their values; the caller re-infers.
Result<bool> expand_einsum(Graph& graph);

}  // namespace seqrt
