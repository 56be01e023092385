// Runs a graph on concrete inputs with the ops' reference kernels, node by
// node, without the runtime: how a pass checks a rewrite on small random
// inputs before it keeps it (lift_scan_recurrences). Subgraphs (Scan, Loop
// and If bodies) run the same way, reading their captures by name from the
// graphs around them. Slow by design: for a few small tensors, not models.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"

namespace seqrt {

// The graph's outputs for `inputs` (one per graph input, in order). `scope`
// holds the values captures read (an enclosing graph's, by name). An error
// names the node whose kernel failed or the capture that is missing.
Result<std::vector<Tensor>> evaluate_reference(
    const Graph& graph, const std::vector<Tensor>& inputs,
    const std::map<std::string, Tensor>& scope = {});

}  // namespace seqrt
