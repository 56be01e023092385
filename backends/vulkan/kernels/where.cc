// Where on f32, i32, i64, bool and f16 values with numpy broadcasting
// (shaders/where.comp). Bools are bytes and halves 2 bytes; the shader
// reads them out of 32-bit words and writes whole words.
#include "backends/vulkan/kernels/kernel_util.h"

namespace seqrt::vulkan {
namespace {

Status record_where(const NodeArgs& args, Recorder& recorder) {
  SEQRT_RETURN_IF_ERROR(require_output_rank_fits(args));
  const std::vector<int64_t>& out = args.output_dims[0];
  int64_t count = element_count(out);
  std::vector<uint32_t> words = {static_cast<uint32_t>(count),
                                 static_cast<uint32_t>(out.size())};
  append_padded(words, out, 1);
  for (int i = 0; i < 3; ++i) {
    append_padded(words, broadcast_strides(args.input_dims[i], out), 0);
  }
  const ElementLayout layout = element_layout(args.output_dtypes[0]);
  const int64_t per_invocation = layout.per_invocation();
  Dispatch dispatch;
  dispatch.shader = "where";
  dispatch.specialization = {kLocalSize, layout.words, layout.part_bytes};
  dispatch.push_constants = words_to_bytes(words);
  dispatch.reads = {args.inputs[0], args.inputs[1], args.inputs[2]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = groups_for((count + per_invocation - 1) / per_invocation,
                               recorder.limits());
  return recorder.dispatch(dispatch);
}

Status supports_where(const Graph& graph, const Node& node,
                      const DeviceLimits&) {
  SEQRT_RETURN_IF_ERROR(require_input(graph, node, 0, DType::kBool));
  return require_movable(graph, node, node.outputs[0]);
}

}  // namespace

void register_where_kernels(KernelTable& table) {
  table.add({kOnnxDomain, "Where", supports_where, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_where(args, r);
             }});
}

}  // namespace seqrt::vulkan
