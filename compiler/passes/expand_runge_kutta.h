// Writes seqrt::RungeKutta nodes out as their stages, for backends that run
// flat schedules of kernels (no subgraph runner): see the .cc.
#pragma once

#include <string>

#include "graph/graph.h"
#include "graph/status.h"

namespace seqrt {

// Replaces every RungeKutta node of `graph` (not of its subgraphs) that can
// be written out: F inlined once per stage, the combinations as ONNX ops.
// The output keeps its value, so graph outputs and readers are unchanged.
// Returns whether anything changed; the caller re-infers types.
Result<bool> expand_runge_kutta(Graph& graph);

// Why this RungeKutta node cannot be written out (a body with subgraphs of
// its own, a capture `graph` lacks, ...), or "" when it can.
std::string runge_kutta_expansion_blocker(const Graph& graph, const Node& node);

}  // namespace seqrt
