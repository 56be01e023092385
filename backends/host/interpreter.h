// Node-by-node interpretation of a graph, with the kernel for each node
// chosen by the caller: the reference backend picks each op's reference
// kernel, the CPU backend its own kernels. Subgraphs (If branches, Loop,
// Scan and RungeKutta bodies) are interpreted with the same chooser.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/node_profiler.h"
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

// A graph's fixed schedule, computed once when it is compiled.
struct Schedule {
  std::vector<int> order;  // node indices, topological
  // Per value: the position in `order` of its last reader; graph outputs
  // and values a subgraph may capture live to the end.
  std::vector<int> last_use;
};
Result<Schedule> schedule_graph(const Graph& graph);

// What a compiled executable fixes ahead of its runs; every field may be
// left empty, and applies to the top graph only (subgraphs are interpreted
// as they come).
struct InterpretOptions {
  const Schedule* schedule = nullptr;  // else computed on each run
  // The kernel of each node, by node index; else `choose` on each run.
  const std::vector<KernelFn>* kernels = nullptr;
  // The schema of each node, by node index; else looked up on each run.
  const std::vector<const OpSchema*>* schemas = nullptr;
  // Lets control-flow kernels prepare their bodies once
  // (KernelContext::prepare_subgraph) instead of interpreting them from
  // scratch every iteration; the bodies' own subgraphs inherit it.
  bool prepare_subgraphs = false;
  // By node index, what each node keeps between runs (KernelContext::
  // node_state; node_states() makes them): a Loop or Scan keeps its
  // prepared body there across runs. A prepared body keeps its own nodes'.
  const std::vector<std::shared_ptr<NodeStateCache>>* node_states = nullptr;
  // Storage of node outputs: given the output's value, dtype and dims,
  // a block of the run's arena, or an empty tensor for the heap.
  std::function<Tensor(ValueId value, DType dtype,
                       const std::vector<int64_t>& dims)>
      place_output;
  // Sees every node output once its kernel has run, and may replace it
  // (to copy out of the arena a view the plan does not know of).
  std::function<Status(ValueId value, Tensor& tensor)> adopt_output;
  // Times each node's kernel into this profiler when set.
  NodeProfiler* profiler = nullptr;
  // Values computed ahead for this run's dim binding (a memory plan's
  // precomputed values) and, by node index, the nodes that produce only
  // such values: these are skipped. Both or neither.
  const std::vector<std::pair<ValueId, Tensor>>* precomputed = nullptr;
  const std::vector<bool>* skipped_nodes = nullptr;
};

// One cache per node of `graph` that holds subgraphs (null for the others),
// for InterpretOptions::node_states.
std::vector<std::shared_ptr<NodeStateCache>> node_states(const Graph& graph);

// Runs `graph` on `inputs` (in graph-input order) and returns its outputs.
// `outer` holds the values of enclosing graphs by name, for captures.
// Inputs are taken by value: one passed as the only handle to its storage
// (moved in) may be updated in place by the node that reads it last
// (KernelContext::take_input); a caller that keeps a copy keeps it intact.
Result<std::vector<Tensor>> interpret_graph(
    const Graph& graph, std::vector<Tensor> inputs, const KernelChooser& choose,
    const std::map<std::string, Tensor>* outer = nullptr,
    const InterpretOptions& options = {});

}  // namespace seqrt
