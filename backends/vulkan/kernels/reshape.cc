// The ops that give the same elements new dims (Reshape, Flatten, Squeeze,
// Unsqueeze, Identity): one buffer copy of any dtype, which the executable
// skips when both sides share memory.
#include <algorithm>

#include "backends/vulkan/kernels/kernel_util.h"

namespace seqrt::vulkan {
namespace {

Status record_view_copy(const NodeArgs& args, Recorder& recorder) {
  BufferSlice src = args.inputs[0];
  BufferSlice dst = args.outputs[0];
  if (src.buffer == dst.buffer && src.offset == dst.offset) {
    return Status::ok();
  }
  src.bytes = dst.bytes = std::min(src.bytes, dst.bytes);
  return recorder.copy(src, dst);
}

}  // namespace

void register_reshape_kernels(KernelTable& table) {
  // The shape or axes input is never read: the plan has the output's dims
  // (the executable refuses sizes known only at run time).
  auto any_dtype = [](const Graph& graph, const Node& node,
                      const DeviceLimits&) {
    return require_host_known(graph, node, 1);
  };
  for (const char* op :
       {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"}) {
    table.add({kOnnxDomain, op, any_dtype, nullptr,
               [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
                 return record_view_copy(args, r);
               }});
  }
}

}  // namespace seqrt::vulkan
