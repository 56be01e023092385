// Range (shaders/range.comp) over f32, i32 and i64 from inputs known when
// recording: constants, or shape arithmetic the plan computes for each
// binding of the dims (a decode step's positions past..past+seq).
#include <cstdint>

#include "backends/vulkan/kernels/fill_values.h"
#include "backends/vulkan/kernels/kernel_util.h"

namespace seqrt::vulkan {
namespace {

Status check_delta(const Node& node, DType dtype, const Tensor& delta) {
  if (dtype != DType::kF32 &&
      (delta.element_i64(0) > INT32_MAX || delta.element_i64(0) < INT32_MIN)) {
    return unsupported("{}: the Vulkan Range takes a 32-bit integer delta",
                       node.label());
  }
  return Status::ok();
}

Status record_range(const NodeArgs& args, Recorder& recorder) {
  const Node& node = *args.node;
  DType dtype = args.output_dtypes[0];
  if (args.known_inputs[0] == nullptr || args.known_inputs[2] == nullptr) {
    return internal_error("{}: start or delta is not known when recording",
                          node.label());
  }
  const Tensor& start = *args.known_inputs[0];
  const Tensor& delta = *args.known_inputs[2];
  SEQRT_RETURN_IF_ERROR(check_delta(node, dtype, delta));
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
    SEQRT_RETURN_IF_ERROR(require_host_known(graph, node, i));
  }
  // A delta known only per binding is checked when recording.
  if (const Tensor* delta = graph.constant(node.inputs[2])) {
    return check_delta(node, graph.value(node.outputs[0]).dtype, *delta);
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
