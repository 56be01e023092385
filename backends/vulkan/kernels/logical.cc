// The logical ops on bools: And, Or, Xor (numpy broadcasting) and Not
// (shaders/bool_op.comp). Bools are bytes, read out of 32-bit words.
#include <utility>

#include "backends/vulkan/kernels/kernel_util.h"

namespace seqrt::vulkan {
namespace {

// And, Or, Xor, Not (code 3: input 0 stands in for the absent b).
Status record_bool_op(uint32_t code, const NodeArgs& args, Recorder& recorder) {
  SEQRT_RETURN_IF_ERROR(require_output_rank_fits(args));
  const std::vector<int64_t>& out = args.output_dims[0];
  int64_t count = element_count(out);
  size_t b = args.inputs.size() > 1 ? 1 : 0;
  std::vector<uint32_t> words = {static_cast<uint32_t>(count),
                                 static_cast<uint32_t>(out.size())};
  append_padded(words, out, 1);
  append_padded(words, broadcast_strides(args.input_dims[0], out), 0);
  append_padded(words, broadcast_strides(args.input_dims[b], out), 0);
  Dispatch dispatch;
  dispatch.shader = "bool_ops";
  dispatch.specialization = {kLocalSize, code};
  dispatch.push_constants = words_to_bytes(words);
  dispatch.reads = {args.inputs[0], args.inputs[b]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = groups_for((count + 3) / 4, recorder.limits());
  return recorder.dispatch(dispatch);
}

Status supports_bool_op(const Graph& graph, const Node& node,
                        const DeviceLimits&) {
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    SEQRT_RETURN_IF_ERROR(require_input(graph, node, i, DType::kBool));
  }
  return require_outputs(graph, node, DType::kBool);
}

}  // namespace

void register_logical_kernels(KernelTable& table) {
  const std::pair<const char*, uint32_t> bool_ops[] = {
      {"And", 0}, {"Or", 1}, {"Xor", 2}, {"Not", 3}};
  for (const auto& [op, code] : bool_ops) {
    uint32_t c = code;
    table.add({kOnnxDomain, op, supports_bool_op, nullptr,
               [c](const NodeArgs& args, const KernelTiling&, Recorder& r) {
                 return record_bool_op(c, args, r);
               }});
  }
}

}  // namespace seqrt::vulkan
