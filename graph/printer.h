// A readable text form of a graph, for `seqrt inspect` and test failures:
//
//   graph mlp (x: f32(batch,64)) -> (y: f32(batch,32))
//     const w: f32(64,32)
//     %mm = MatMul(x, w)
//     y = Relu(%mm)
#pragma once

#include <string>

#include "graph/graph.h"

namespace seqrt {

std::string print_graph(const Graph& graph);

}  // namespace seqrt
