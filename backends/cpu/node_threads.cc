#include "backends/cpu/node_threads.h"

#include <utility>

#include "backends/cpu/parallel.h"
#include "backends/cpu/thread_governor.h"

namespace seqrt::cpu {
namespace {

// Bytes of the node's outputs whose dims the graph fixes; the others are
// counted as empty (their size shows only once the kernel runs).
size_t fixed_output_bytes(const Graph& graph, const Node& node) {
  size_t bytes = 0;
  for (ValueId id : node.outputs) {
    if (id == kNoValue) continue;
    const Value& value = graph.values[id];
    if (!value.shape || !value.shape->is_fixed()) continue;
    size_t elements = 1;
    for (int64_t d : value.shape->fixed_dims())
      elements *= static_cast<size_t>(d);
    bytes += elements * dtype_size(value.dtype);
  }
  return bytes;
}

}  // namespace

KernelFn with_node_threads(const Graph& graph, const Node& node,
                           KernelFn kernel) {
  const size_t output_bytes = fixed_output_bytes(graph, node);
  const bool always_team =
      node.has_subgraphs() || output_bytes >= kParallelNodeBytes;
  return [kernel = std::move(kernel), output_bytes,
          always_team](KernelContext& ctx) {
    size_t bytes = output_bytes;
    for (size_t i = 0; i < ctx.num_inputs() && bytes < kParallelNodeBytes;
         ++i) {
      if (ctx.has_input(i)) bytes += ctx.input(i)->byte_size();
    }
    if (always_team || bytes >= kParallelNodeBytes) {
      GovernedRun::before_team_node();
      return kernel(ctx);
    }
    if (max_threads() == 1) return kernel(ctx);
    ScopedThreads serial(1);
    return kernel(ctx);
  };
}

}  // namespace seqrt::cpu
