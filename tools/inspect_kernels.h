// `seqrt inspect FILE --plan --backend NAME [--bind NAME=SIZE ...]`: the
// backend's kernel-level plan (DESIGN.md §5.2) — per node, the tiling, where
// the running state lives and the on-chip bytes next to the device limit.
#pragma once

#include <string>
#include <vector>

#include "backends/backend_options.h"
#include "graph/graph.h"
#include "graph/status.h"

namespace seqrt {

// Compiles `graph` on `backend` (opened with `backend_options`) as `seqrt
// run` would, with the symbolic dims bound by `bindings` ("seq=128"), and
// prints the kernel plan.
Status print_kernel_plan(const Graph& graph, const std::string& backend,
                         const BackendOptions& backend_options,
                         const std::vector<std::string>& bindings);

}  // namespace seqrt
