// Node-by-node interpretation of a graph, with the kernel for each node
// chosen by the caller: the reference backend picks each op's reference
// kernel, the CPU backend its own kernels. Subgraphs (If branches, Loop,
// Scan and RungeKutta bodies) are interpreted with the same chooser.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "ops/op_schema.h"

namespace seqrt {

using KernelFn = std::function<Status(KernelContext&)>;
// Returns the kernel that runs `node`, or an error saying why none does.
using KernelChooser =
    std::function<Result<KernelFn>(const Node& node, const OpSchema& schema)>;

// Checks `inputs` against the graph's declared inputs: count, dtype, rank,
// fixed dims, and that each symbolic dim has one size across all inputs.
Status check_graph_inputs(const Graph& graph,
                          const std::vector<Tensor>& inputs);

// Runs `graph` on `inputs` (in graph-input order) and returns its outputs.
// `outer` holds the values of enclosing graphs by name, for captures.
// Inputs are taken by value: one passed as the only handle to its storage
// (moved in) may be updated in place by the node that reads it last
// (KernelContext::take_input); a caller that keeps a copy keeps it intact.
Result<std::vector<Tensor>> interpret_graph(
    const Graph& graph, std::vector<Tensor> inputs, const KernelChooser& choose,
    const std::map<std::string, Tensor>* outer = nullptr);

}  // namespace seqrt
