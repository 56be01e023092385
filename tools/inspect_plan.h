// `seqrt inspect FILE --plan [--bind NAME=VALUE ...]`: the memory plan
// (compiler/planner/) of a model as a Session would run it.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"

namespace seqrt {

// Optimises a copy of `graph` as Session::create does, plans it with the
// symbolic dims bound by `bindings` ("seq=128"), and prints each value's
// kind, offset and size, then the peak arena next to the naive sum.
Status print_memory_plan(const Graph& graph,
                         const std::vector<std::string>& bindings);

}  // namespace seqrt
