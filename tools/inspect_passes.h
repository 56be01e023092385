// `seqrt inspect FILE --passes`: what the default pass pipeline does to a
// model (compiler/passes/pass.h).
#pragma once

#include "graph/graph.h"
#include "graph/status.h"

namespace seqrt {

// Prints `graph`, the statistics of each pass of optimize_graph() run on a
// copy, and the optimised graph.
Status print_passes(const Graph& graph);

}  // namespace seqrt
