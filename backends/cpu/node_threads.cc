#include "backends/cpu/node_threads.h"

#include <strings.h>

#include <cstdlib>
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
    bytes += dtype_bytes(value.dtype, elements);
  }
  return bytes;
}

}  // namespace

size_t parallel_node_bytes_for(const char* wait_policy) {
  if (wait_policy == nullptr) return kParallelNodeBytes;
  return strcasecmp(wait_policy, "passive") == 0 ? kParallelNodeBytesPassive
                                                 : kParallelNodeBytes;
}

size_t parallel_node_bytes() {
  static const size_t bytes =
      parallel_node_bytes_for(std::getenv("OMP_WAIT_POLICY"));
  return bytes;
}

KernelFn with_node_threads(const Graph& graph, const Node& node,
                           KernelFn kernel) {
  const size_t output_bytes = fixed_output_bytes(graph, node);
  const size_t threshold = parallel_node_bytes();
  const bool always_team = node.has_subgraphs() || output_bytes >= threshold;
  return [kernel = std::move(kernel), output_bytes, threshold,
          always_team](KernelContext& ctx) {
    size_t bytes = output_bytes;
    for (size_t i = 0; i < ctx.num_inputs() && bytes < threshold; ++i) {
      if (ctx.has_input(i)) bytes += ctx.input(i)->byte_size();
    }
    if (always_team || bytes >= threshold) {
      GovernedRun::before_team_node();
      return kernel(ctx);
    }
    if (max_threads() == 1) return kernel(ctx);
    ScopedThreads serial(1);
    return kernel(ctx);
  };
}

}  // namespace seqrt::cpu
