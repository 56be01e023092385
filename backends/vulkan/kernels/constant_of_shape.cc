// ConstantOfShape: a fill of the value attribute's element (range.comp with
// delta 0; bools a byte fill).
#include "backends/vulkan/kernels/fill_values.h"
#include "backends/vulkan/kernels/kernel_util.h"

namespace seqrt::vulkan {
namespace {

Status record_constant_of_shape(const NodeArgs& args, Recorder& recorder) {
  DType dtype = args.output_dtypes[0];
  const Attribute* value = args.node->attr("value");
  std::array<uint32_t, 2> start = {0, 0};
  if (dtype == DType::kBool) {
    // Bools are bytes: a word of four equal bytes fills them.
    bool set = value != nullptr && value->as_tensor().element_i64(0) != 0;
    return recorder.fill(args.outputs[0], set ? 0x01010101u : 0u);
  }
  if (value != nullptr) start = value_words(value->as_tensor(), dtype);
  return record_sequence(args.outputs[0], dtype,
                         element_count(args.output_dims[0]), start, 0,
                         recorder);
}

Status supports_constant_of_shape(const Graph& graph, const Node& node,
                                  const DeviceLimits&) {
  if (graph.value(node.outputs[0]).dtype != DType::kBool) {
    SEQRT_RETURN_IF_ERROR(require_words_dtype(graph, node, node.outputs[0]));
  }
  // The shape input is never read: the plan has the output's dims.
  return require_host_known(graph, node, 0);
}

}  // namespace

void register_constant_of_shape_kernels(KernelTable& table) {
  table.add({kOnnxDomain, "ConstantOfShape", supports_constant_of_shape,
             nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_constant_of_shape(args, r);
             }});
}

}  // namespace seqrt::vulkan
