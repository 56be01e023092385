// Pad (shaders/pad.comp) over 32-bit words (f32, i32, i64).
#include <algorithm>

#include "backends/vulkan/kernels/fill_values.h"
#include "backends/vulkan/kernels/kernel_util.h"
#include "ops/node_attrs.h"

namespace seqrt::vulkan {
namespace {

Status record_pad(const NodeArgs& args, Recorder& recorder) {
  const Node& node = *args.node;
  const std::vector<int64_t>& in = args.input_dims[0];
  const std::vector<int64_t>& out = args.output_dims[0];
  if (in.size() > kMaxRank) {
    return unsupported("{}: rank {} is over the Vulkan kernel's {}",
                       node.label(), in.size(), kMaxRank);
  }
  std::vector<int64_t> pads = constant_ints(args, 1);
  std::vector<int64_t> axes = constant_ints(args, 3);
  if (axes.empty()) {
    for (size_t d = 0; d < in.size(); ++d) axes.push_back(d);
  }
  std::vector<int64_t> begin(in.size(), 0);
  for (size_t i = 0; i < axes.size() && i < pads.size(); ++i) {
    begin[normalized_axis(axes[i], in.size())] = pads[i];
  }
  const std::string& mode = node_attr_string(node, "mode");
  uint32_t mode_code = mode == "reflect" ? 1
                       : mode == "edge"  ? 2
                       : mode == "wrap"  ? 3
                                         : 0;
  std::array<uint32_t, 2> value = {0, 0};
  if (node.inputs.size() > 2 && node.inputs[2] != kNoValue) {
    // A constant, or a host parameter the executable read for this run.
    const Tensor* known = args.known_inputs[2];
    if (known == nullptr) {
      return internal_error("{}: the pad value is not known when recording",
                            node.label());
    }
    value = value_words(*known, args.output_dtypes[0]);
  }
  int64_t count = element_count(out);
  std::vector<uint32_t> words = {static_cast<uint32_t>(count),
                                 static_cast<uint32_t>(in.size()), value[0],
                                 value[1]};
  append_padded(words, out, 1);
  append_padded(words, in, 1);
  append_padded(words, begin, 0);
  Dispatch dispatch;
  dispatch.shader = "pad";
  dispatch.specialization = {kLocalSize, mode_code,
                             element_words(args.output_dtypes[0])};
  dispatch.push_constants = words_to_bytes(words);
  dispatch.reads = {args.inputs[0]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = groups_for(count, recorder.limits());
  return recorder.dispatch(dispatch);
}

Status supports_pad(const Graph& graph, const Node& node, const DeviceLimits&) {
  SEQRT_RETURN_IF_ERROR(require_words_dtype(graph, node, node.outputs[0]));
  SEQRT_RETURN_IF_ERROR(require_known_ints(graph, node, 1));
  if (node.inputs.size() <= 2 || !is_host_parameter(graph, node.inputs[2])) {
    SEQRT_RETURN_IF_ERROR(require_constant(graph, node, 2));
  }
  return require_known_ints(graph, node, 3);
}

}  // namespace

void register_pad_kernels(KernelTable& table) {
  table.add({kOnnxDomain, "Pad", supports_pad, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_pad(args, r);
             }});
}

}  // namespace seqrt::vulkan
