// One node cut out of its graph, so that a lowering can be tried on it
// alone: "would this node still run once written out?".
#pragma once

#include "graph/graph.h"

namespace seqrt {

// `node` alone in a graph of its own: its inputs and the values its
// subgraphs capture become graph inputs (constants stay constants, and the
// values of Constant nodes keep their Constant node), its outputs graph
// outputs.
Graph node_alone(const Graph& graph, const Node& node);

}  // namespace seqrt
