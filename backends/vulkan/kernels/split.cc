// Split: one strided copy (strided_copy.h) per output, from the running
// offset along the axis (f32, i32, i64).
#include <algorithm>

#include "backends/vulkan/kernels/kernel_util.h"
#include "backends/vulkan/kernels/strided_copy.h"
#include "ops/node_attrs.h"

namespace seqrt::vulkan {
namespace {

// Split: output k is the input from the running offset along the axis.
Status record_split(const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& in = args.input_dims[0];
  size_t axis = static_cast<size_t>(
      normalized_axis(node_attr_int(*args.node, "axis"), in.size()));
  std::vector<int64_t> strides = row_major_strides(in);
  int64_t at = 0;
  for (size_t k = 0; k < args.outputs.size(); ++k) {
    const std::vector<int64_t>& out = args.output_dims[k];
    if (!args.outputs[k].empty() && element_count(out) > 0) {
      SEQRT_RETURN_IF_ERROR(strided_copy(
          args.inputs[0], args.outputs[k], out, strides, row_major_strides(out),
          at * strides[axis], 0, element_words(args.output_dtypes[k]),
          *args.node, recorder));
    }
    at += out[axis];
  }
  return Status::ok();
}

}  // namespace

void register_split_kernels(KernelTable& table) {
  table.add({kOnnxDomain, "Split", supports_planned_words, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_split(args, r);
             }});
}

}  // namespace seqrt::vulkan
