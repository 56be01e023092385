// Runs a graph of f16 tensors in f32, for backends whose arithmetic kernels
// are f32 (Vulkan): the graph's f16 inputs and outputs keep their type at
// the edges, through Cast nodes, and everything between is f32. The result
// is at least as precise as computing in f16 (each op rounds once, in f32,
// instead of to f16), so it agrees with an f16 reference within f16's
// tolerance; weights stay exact (f16 -> f32 is lossless) and a backend may
// still store them as f16 (compiler/passes/half_weights.h).
#pragma once

#include "graph/graph.h"
#include "graph/status.h"

namespace seqrt {

// Whether any value of `graph` (not of its subgraphs) is f16.
bool has_f16_values(const Graph& graph);

// Rewrites `graph` (not its subgraphs) so:
// - each f16 graph input is read through a new Cast to f32;
// - each f16 graph output a node makes is made in f32 and cast back by a
//   new Cast to f16 (an input handed straight out stays as it is);
// - every other f16 value is f32, f16 constants are converted (exactly),
//   and attributes that ask for f16 (Cast 'to', the 'value' tensor of
//   Constant and ConstantOfShape) ask for f32.
// A node with a subgraph that has or touches f16 tensors makes this an
// error naming the node (its body would need the same rewrite). Returns whether
// anything changed; the caller re-infers.
Result<bool> compute_f16_in_f32(Graph& graph);

}  // namespace seqrt
