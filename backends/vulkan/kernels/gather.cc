// Gather and GatherElements over 32-bit words (f32, i32, i64), one shader
// (shaders/gather.comp) that differs only in how an index picks its source.
#include <fmt/format.h>

#include "backends/vulkan/kernels/kernel_util.h"
#include "ops/node_attrs.h"

namespace seqrt::vulkan {
namespace {

Status record_gather(bool elements, const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& data = args.input_dims[0];
  const std::vector<int64_t>& out = args.output_dims[0];
  size_t axis = static_cast<size_t>(
      normalized_axis(node_attr_int(*args.node, "axis"), data.size()));
  if (elements && out.size() > kMaxRank) {
    return unsupported("{}: rank {} is over the Vulkan kernel's {}",
                       args.node->label(), out.size(), kMaxRank);
  }
  int64_t count = element_count(out);
  int64_t inner = 1;
  for (size_t d = axis + 1; d < data.size(); ++d) inner *= data[d];
  std::vector<uint32_t> words = {
      static_cast<uint32_t>(count),
      static_cast<uint32_t>(data[axis]),
      static_cast<uint32_t>(inner),
      static_cast<uint32_t>(element_count(args.input_dims[1])),
      static_cast<uint32_t>(out.size()),
      static_cast<uint32_t>(axis)};
  append_padded(words, elements ? out : std::vector<int64_t>{}, 1);
  append_padded(words,
                elements ? row_major_strides(data) : std::vector<int64_t>{}, 0);
  Dispatch dispatch;
  dispatch.shader = "gather";
  dispatch.specialization = {kLocalSize, elements ? 1u : 0u,
                             element_words(args.output_dtypes[0]),
                             index_words(args.input_dtypes[1])};
  dispatch.push_constants = words_to_bytes(words);
  SEQRT_ASSIGN_OR_RETURN(
      BufferSlice error,
      recorder.error_word(
          fmt::format("an index is out of range [-{0}, {0}) along axis {1}",
                      data[axis], axis)));
  dispatch.reads = {args.inputs[0], args.inputs[1]};
  dispatch.writes = {args.outputs[0], error};
  dispatch.groups = groups_for(count, recorder.limits());
  return recorder.dispatch(dispatch);
}

Status supports_gather(const Graph& graph, const Node& node,
                       const DeviceLimits&) {
  return require_words_dtype(graph, node, node.outputs[0]);
}

}  // namespace

void register_gather_kernels(KernelTable& table) {
  for (bool elements : {false, true}) {
    table.add(
        {kOnnxDomain, elements ? "GatherElements" : "Gather", supports_gather,
         nullptr,
         [elements](const NodeArgs& args, const KernelTiling&, Recorder& r) {
           return record_gather(elements, args, r);
         }});
  }
}

}  // namespace seqrt::vulkan
