// SelectiveScan on Vulkan (shader seq_selective_scan). Exposed so tests
// can record it with the debug store counter on.
#pragma once

#include "backends/vulkan/kernel.h"

namespace seqrt::vulkan {

Result<KernelTiling> plan_selective_scan_node(const NodeArgs& args,
                                              const DeviceLimits& limits);
// Records the scan. With `store_counter` (one uint32, zeroed by the
// caller), the shader adds 1 to it for every state element it stores to
// device memory: a test can check the state is written once per pass.
Status record_selective_scan(const NodeArgs& args, const KernelTiling& tiling,
                             Recorder& recorder,
                             const BufferSlice* store_counter);

}  // namespace seqrt::vulkan
