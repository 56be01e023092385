// RotaryEmbedding (opset 23) in fp32, one invocation per element
// (shaders/rotary.comp).
#include "backends/vulkan/kernels/kernel_util.h"
#include "ops/node_attrs.h"

namespace seqrt::vulkan {
namespace {

Status record_rotary(const NodeArgs& args, Recorder& recorder) {
  const Node& node = *args.node;
  const std::vector<int64_t>& x = args.input_dims[0];
  if (x.size() != 3 && x.size() != 4) {
    return invalid_argument("{}: X must be 3-D or 4-D, got rank {}",
                            node.label(), x.size());
  }
  bool three_d = x.size() == 3;
  int64_t num_heads = node_attr_int(node, "num_heads");
  if (three_d && num_heads <= 0) {
    return invalid_argument("{}: num_heads is required when X is 3-D",
                            node.label());
  }
  int64_t head_size = three_d ? x[2] / num_heads : x[3];
  int64_t rot = node_attr_int(node, "rotary_embedding_dim");
  if (rot == 0) rot = head_size;
  int64_t seq = three_d ? x[1] : x[2];
  int64_t count = element_count(x);
  bool has_positions = args.inputs.size() > 3 && !args.inputs[3].empty();
  Dispatch dispatch;
  dispatch.shader = "rotary";
  dispatch.specialization = {kLocalSize,
                             node_attr_int(node, "interleaved") != 0 ? 1u : 0u,
                             has_positions ? 1u : 0u};
  dispatch.push_constants =
      push_bytes({static_cast<uint32_t>(count),
                  static_cast<uint32_t>(head_size), static_cast<uint32_t>(rot),
                  static_cast<uint32_t>(three_d ? x[2] : head_size),
                  static_cast<uint32_t>(seq),
                  static_cast<uint32_t>(x[0] == 0 ? 1 : count / x[0])});
  // Without position_ids the shader's binding 3 is never read; X stands in.
  dispatch.reads = {args.inputs[0], args.inputs[1], args.inputs[2],
                    has_positions ? args.inputs[3] : args.inputs[0]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = groups_for(count, recorder.limits());
  return recorder.dispatch(dispatch);
}

Status supports_rotary(const Graph& graph, const Node& node,
                       const DeviceLimits&) {
  for (size_t i = 0; i < 3; ++i) {
    SEQRT_RETURN_IF_ERROR(require_input(graph, node, i, DType::kF32));
  }
  SEQRT_RETURN_IF_ERROR(require_input(graph, node, 3, DType::kI64));
  return require_outputs(graph, node, DType::kF32);
}

}  // namespace

void register_rotary_kernels(KernelTable& table) {
  table.add({kOnnxDomain, "RotaryEmbedding", supports_rotary, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_rotary(args, r);
             }});
}

}  // namespace seqrt::vulkan
