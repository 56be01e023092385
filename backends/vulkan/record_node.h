// One node of a planned graph recorded by its kernel: the places and dims
// of its values handed over as NodeArgs. Shared by the executable's
// schedule and a Scan body's (scan.h).
#pragma once

#include <set>
#include <vector>

#include "backends/vulkan/kernel.h"
#include "compiler/planner/memory_plan.h"

namespace seqrt::vulkan {

// Records graph.nodes[index] with `places` (by ValueId) and `plan`'s dims;
// `half_weights` are read as kF16. `tiling` gets the kernel's plan, and
// `planned` whether it has one.
Status record_node(const Graph& graph, int index, const MemoryPlan& plan,
                   const std::vector<BufferSlice>& places,
                   const std::set<ValueId>& half_weights,
                   const DeviceLimits& limits, Recorder& recorder,
                   KernelTiling& tiling, bool& planned);

}  // namespace seqrt::vulkan
