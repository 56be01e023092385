// One node of a planned graph recorded by its kernel: the places and dims
// of its values handed over as NodeArgs. Shared by the executable's
// schedule and a Scan body's (scan.h).
#pragma once

#include <map>
#include <set>
#include <vector>

#include "backends/vulkan/kernel.h"
#include "compiler/planner/memory_plan.h"

namespace seqrt::vulkan {

// Records graph.nodes[index] with `places` (by ValueId) and `plan`'s dims;
// `half_weights` are read as kF16. `tiling` gets the kernel's plan, and
// `planned` whether it has one. `host_values`: the values of the graph's
// host parameters for this recording (kernel_util.h), which kernels see in
// NodeArgs::known_inputs; a parameter input that is a graph input without
// one (a Scan body's) is refused.
Status record_node(const Graph& graph, int index, const MemoryPlan& plan,
                   const std::vector<BufferSlice>& places,
                   const std::set<ValueId>& half_weights,
                   const DeviceLimits& limits, Recorder& recorder,
                   KernelTiling& tiling, bool& planned,
                   const std::map<ValueId, Tensor>* host_values = nullptr);

}  // namespace seqrt::vulkan
