// What the backends' FusedElementwise programs share: which body nodes the
// output depends on, in the order a program evaluates them.
#pragma once

#include <vector>

#include "graph/graph.h"
#include "graph/status.h"

namespace seqrt {

// Indices of the body nodes `body`'s output depends on, in dependency
// order; kUnsupported naming `fused` when no body node computes it.
Result<std::vector<int>> fused_body_nodes(const Node& fused, const Graph& body);

}  // namespace seqrt
