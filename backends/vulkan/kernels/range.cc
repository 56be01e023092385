// Range (shaders/range.comp) over f32, i32 and i64 from constant inputs.
#include <cstdint>

#include "backends/vulkan/kernels/fill_values.h"
#include "backends/vulkan/kernels/kernel_util.h"

namespace seqrt::vulkan {
namespace {

Status record_range(const NodeArgs& args, Recorder& recorder) {
  const Graph& graph = *args.graph;
  const Node& node = *args.node;
  DType dtype = args.output_dtypes[0];
  const Tensor& start = *graph.constant(node.inputs[0]);
  const Tensor& delta = *graph.constant(node.inputs[2]);
  uint32_t delta_word =
      dtype == DType::kF32
          ? float_word(static_cast<float>(delta.element_f64(0)))
          : static_cast<uint32_t>(delta.element_i64(0));
  return record_sequence(args.outputs[0], dtype,
                         element_count(args.output_dims[0]),
                         value_words(start, dtype), delta_word, recorder);
}

Status supports_range(const Graph& graph, const Node& node,
                      const DeviceLimits&) {
  SEQRT_RETURN_IF_ERROR(require_words_dtype(graph, node, node.outputs[0]));
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    SEQRT_RETURN_IF_ERROR(require_constant(graph, node, i));
  }
  const Tensor* delta = graph.constant(node.inputs[2]);
  if (graph.value(node.outputs[0]).dtype != DType::kF32 &&
      (delta->element_i64(0) > INT32_MAX ||
       delta->element_i64(0) < INT32_MIN)) {
    return unsupported("{}: the Vulkan Range takes a 32-bit integer delta",
                       node.label());
  }
  return Status::ok();
}

}  // namespace

void register_range_kernels(KernelTable& table) {
  table.add({kOnnxDomain, "Range", supports_range, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_range(args, r);
             }});
}

}  // namespace seqrt::vulkan
