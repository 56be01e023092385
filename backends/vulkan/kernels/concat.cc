// Concat: one strided copy (strided_copy.h) per input into its part of
// the output (f32, i32, i64).
#include <algorithm>

#include "backends/vulkan/kernels/kernel_util.h"
#include "backends/vulkan/kernels/strided_copy.h"

namespace seqrt::vulkan {
namespace {

Status record_concat(const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& out = args.output_dims[0];
  int64_t axis = args.node->attr("axis")->as_int();
  if (axis < 0) axis += static_cast<int64_t>(out.size());
  std::vector<int64_t> out_strides = row_major_strides(out);
  int64_t at = 0;
  for (size_t i = 0; i < args.inputs.size(); ++i) {
    const std::vector<int64_t>& in = args.input_dims[i];
    if (element_count(in) == 0) continue;
    SEQRT_RETURN_IF_ERROR(strided_copy(
        args.inputs[i], args.outputs[0], in, row_major_strides(in), out_strides,
        0, at * out_strides[axis], element_words(args.output_dtypes[0]),
        *args.node, recorder));
    at += in[axis];
  }
  return Status::ok();
}

}  // namespace

void register_concat_kernels(KernelTable& table) {
  table.add({kOnnxDomain, "Concat", supports_words, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_concat(args, r);
             }});
}

}  // namespace seqrt::vulkan
