// Trilu (shaders/trilu.comp) on every dtype element_layout moves.
#include "backends/vulkan/kernels/kernel_util.h"
#include "ops/node_attrs.h"

namespace seqrt::vulkan {
namespace {

Status record_trilu(const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& dims = args.input_dims[0];
  if (dims.size() < 2) {
    return invalid_argument("{}: Trilu needs rank >= 2", args.node->label());
  }
  std::vector<int64_t> k = constant_ints(args, 1, {0});
  int64_t count = element_count(dims);
  const ElementLayout layout = element_layout(args.output_dtypes[0]);
  Dispatch dispatch;
  dispatch.shader = "trilu";
  dispatch.specialization = {kLocalSize,
                             node_attr_int(*args.node, "upper") != 0 ? 1u : 0u,
                             layout.words, layout.part_bytes};
  // k past the matrix behaves like the edge; clamp it into 32 bits.
  int64_t k_clamped =
      std::max<int64_t>(-(1 << 30), std::min<int64_t>(k[0], 1 << 30));
  dispatch.push_constants = push_bytes(
      {static_cast<uint32_t>(count),
       static_cast<uint32_t>(dims[dims.size() - 2]),
       static_cast<uint32_t>(dims.back()), static_cast<uint32_t>(k_clamped)});
  dispatch.reads = {args.inputs[0]};
  dispatch.writes = {args.outputs[0]};
  const int64_t per_invocation = layout.per_invocation();
  dispatch.groups = groups_for((count + per_invocation - 1) / per_invocation,
                               recorder.limits());
  return recorder.dispatch(dispatch);
}

Status supports_trilu(const Graph& graph, const Node& node,
                      const DeviceLimits&) {
  SEQRT_RETURN_IF_ERROR(require_movable(graph, node, node.outputs[0]));
  return require_known_ints(graph, node, 1);
}

}  // namespace

void register_trilu_kernels(KernelTable& table) {
  table.add({kOnnxDomain, "Trilu", supports_trilu, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_trilu(args, r);
             }});
}

}  // namespace seqrt::vulkan
