// Node-by-node interpretation of a graph with the reference kernels.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace seqrt {

// Checks `inputs` against the graph's declared inputs: count, dtype, rank,
// fixed dims, and that each symbolic dim has one size across all inputs.
Status check_graph_inputs(const Graph& graph,
                          const std::vector<Tensor>& inputs);

}  // namespace seqrt
