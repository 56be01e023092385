// Which ops let the planner share memory between a node's input and output.
#pragma once

#include "graph/graph.h"

namespace seqrt {

// Reshape, Flatten, Squeeze, Unsqueeze, Identity: the output holds the bytes
// of input 0 unchanged, so it can alias that input's memory.
bool is_view_op(const Node& node);

// Unary and binary elementwise ops (and Where, Cast): output element i is
// computed from input elements at i alone, so the output may overwrite an
// input of the same byte size whose memory nothing reads afterwards.
bool is_elementwise_op(const Node& node);

}  // namespace seqrt
