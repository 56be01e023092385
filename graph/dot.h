// The graph as Graphviz DOT text, for `seqrt inspect --dot FILE`:
//
//   seqrt inspect model.seqrt --dot model.dot && dot -Tsvg model.dot -o
//   model.svg
//
// Nodes are boxes labelled with their op and name; graph inputs, outputs
// and state values are ellipses; each edge is labelled with the type of the
// value it carries. Constants (weights) are folded into the label of the
// node that reads them, so a model with thousands of weights stays
// readable. Subgraphs (If branches, Scan/Loop/RungeKutta bodies) are drawn
// as clusters inside their node's cluster.
#pragma once

#include <string>

#include "graph/graph.h"

namespace seqrt {

std::string graph_to_dot(const Graph& graph);

}  // namespace seqrt
