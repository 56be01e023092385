// Structural checks of a graph, run on every graph that comes from outside
// (importers, builders) before anything uses it.
#pragma once

#include "graph/graph.h"

namespace seqrt {

// Subgraphs nest at most this deep (If inside Scan inside RungeKutta ...):
// the loaders' fixed bound, which keeps their recursion shallow. Sessions
// enforce a lower default, Limits::max_subgraph_depth (graph/limits.h).
inline constexpr int kMaxSubgraphDepth = 64;

// Checks: value ids in range; unique, non-empty value names; every value
// defined once (graph input, constant, capture or node output); every node
// input and graph output defined; no cycle; graph inputs typed; constants
// match their value's dtype and shape; state pairs join a graph input to a
// graph output of the same type; subgraphs verified recursively with
// captures resolved against the enclosing graphs, nested at most
// kMaxSubgraphDepth deep. Op semantics are checked by
// compiler/infer/infer_graph.h. With `standalone_subgraph`, `graph` is a
// subgraph verified on its own: its captures are taken as provided by an
// enclosing graph not at hand.
Status verify_graph(const Graph& graph, bool standalone_subgraph = false);

}  // namespace seqrt
