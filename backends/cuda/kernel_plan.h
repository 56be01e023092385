// The CUDA backend's kernel-level plan of a graph (DESIGN.md §5.2) for
// `seqrt inspect --plan`: for each node the planner tiles (SelectiveScan,
// Attention, Retention, LinearAttention, SSD, NeuralMemory), the tiling the
// kernel will use for these shapes on this device, where its running state
// lives and the shared memory per block against the limit. Pure host code: the
// same planner calls and form choices as the kernel table, from the graph's
// shapes instead of tensors, so it is tested without a GPU.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/cuda/tiling.h"
#include "graph/graph.h"

namespace seqrt::cuda {

// LinearAttention's form (kernel_table_sequence.cc and the plan agree):
// chunkwise for the linear rule and the per-head gated rule on T >= 16,
// the recurrence otherwise.
inline bool linear_attention_chunkwise(bool uses_beta, bool per_key_decay,
                                       int64_t steps) {
  return !uses_beta && !per_key_decay && prefer_chunkwise(steps);
}

// kUnsupported, naming the node, when the planner refuses the node's
// known shapes on a device with these limits (a memory MLP too large for
// shared memory, a SelectiveScan state too large for registers), so that
// compile and supports() refuse it as they do a missing kernel; Ok when it
// fits or when a dim is still symbolic (the run decides).
Status check_plannable(const Graph& graph, const Node& node,
                       const DeviceLimits& limits);

// Symbolic dims take their size from `bindings`; a node whose shape is
// still unknown is an error naming the dim to bind.
Result<std::vector<KernelPlanEntry>> plan_cuda_kernels(
    const Graph& graph, const DeviceLimits& limits,
    const std::map<std::string, int64_t>& bindings);

}  // namespace seqrt::cuda
