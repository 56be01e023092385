// Tile (ONNX) of f32, i32, i64, bool and f16 (element_layout),
// shaders/tile.comp. The
// output's dims come from the plan, so `repeats` must be known there (a
// constant or shape arithmetic); the shader never reads it.
#include "backends/vulkan/kernels/kernel_util.h"

namespace seqrt::vulkan {
namespace {

Status record_tile(const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& in = args.input_dims[0];
  const std::vector<int64_t>& out = args.output_dims[0];
  const int64_t count = element_count(out);
  if (count == 0) return Status::ok();
  if (out.size() > kMaxRank) {
    return unsupported("{}: rank {} is over the Vulkan kernel's {}",
                       args.node->label(), out.size(), kMaxRank);
  }
  std::vector<uint32_t> words = {static_cast<uint32_t>(count),
                                 static_cast<uint32_t>(out.size())};
  append_padded(words, out, 1);
  append_padded(words, in, 1);
  const ElementLayout layout = element_layout(args.output_dtypes[0]);
  const int64_t per_invocation = layout.per_invocation();
  Dispatch dispatch;
  dispatch.shader = "tile";
  dispatch.specialization = {kLocalSize, layout.words, layout.part_bytes};
  dispatch.push_constants = words_to_bytes(words);
  dispatch.reads = {args.inputs[0]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = groups_for((count + per_invocation - 1) / per_invocation,
                               recorder.limits());
  return recorder.dispatch(dispatch);
}

Status supports_tile(const Graph& graph, const Node& node,
                     const DeviceLimits&) {
  SEQRT_RETURN_IF_ERROR(require_movable(graph, node, node.outputs[0]));
  return require_host_known(graph, node, 1);
}

}  // namespace

void register_tile_kernels(KernelTable& table) {
  table.add({kOnnxDomain, "Tile", supports_tile, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_tile(args, r);
             }});
}

}  // namespace seqrt::vulkan
