// Expand: the strided-copy shader (strided_copy.h) reading the input with
// zero strides on its broadcast axes (f32, i32, i64).
#include <algorithm>

#include "backends/vulkan/kernels/kernel_util.h"
#include "backends/vulkan/kernels/strided_copy.h"

namespace seqrt::vulkan {
namespace {

Status record_expand(const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& out = args.output_dims[0];
  return strided_copy(
      args.inputs[0], args.outputs[0], out,
      broadcast_strides(args.input_dims[0], out), row_major_strides(out), 0, 0,
      element_words(args.output_dtypes[0]), *args.node, recorder);
}

}  // namespace

void register_expand_kernels(KernelTable& table) {
  table.add({kOnnxDomain, "Expand", supports_planned_words, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_expand(args, r);
             }});
}

}  // namespace seqrt::vulkan
