// CausalConvWithState (ONNX opset 27) on Vulkan: one dispatch for the
// output (seq_causal_conv), one for present_state
// (seq_causal_conv_state).
#include "backends/vulkan/kernels/sequence_util.h"
#include "backends/vulkan/tiling.h"
#include "ops/sequence/causal_conv_with_state.h"

namespace seqrt::vulkan {
namespace {

using In = CausalConvInput;
using Out = CausalConvOutput;
constexpr uint32_t kHasPast = 1, kHasBias = 16;

Result<CausalConvDims> conv_dims(const NodeArgs& args) {
  return check_causal_conv(*args.node, input_types(args, In::kCount));
}

Result<KernelTiling> plan_conv(const NodeArgs& args,
                               const DeviceLimits& limits) {
  SEQRT_ASSIGN_OR_RETURN(CausalConvDims d, conv_dims(args));
  return plan_causal_conv(d.kernel, d.length, limits);
}

Status record_conv(const NodeArgs& args, const KernelTiling& tiling,
                   Recorder& recorder) {
  SEQRT_ASSIGN_OR_RETURN(CausalConvDims d, conv_dims(args));
  SEQRT_ASSIGN_OR_RETURN(ConvTiling t, conv_tiling_from(tiling));
  SEQRT_ASSIGN_OR_RETURN(CausalConvAttrs attrs,
                         CausalConvAttrs::from(*args.node));
  const uint32_t activation = attrs.silu ? 1 : 0;
  const BufferSlice x = input_or_empty(args, In::kInput);
  const BufferSlice past = input_or_empty(args, In::kPastState);
  uint32_t flags = past.empty() ? 0 : kHasPast;
  if (!input_or_empty(args, In::kBias).empty()) flags |= kHasBias;
  const auto batch = static_cast<uint32_t>(d.batch);
  const auto channels = static_cast<uint32_t>(d.channels);
  const auto length = static_cast<uint32_t>(d.length);

  if (d.length > 0) {
    Dispatch conv;
    conv.shader = "seq_causal_conv";
    conv.specialization = tiling.constants;
    conv.push_constants =
        push_bytes({batch, channels, length, flags, activation});
    conv.reads = {x, input_or_empty(args, In::kWeight),
                  or_stand_in(input_or_empty(args, In::kBias), x),
                  or_stand_in(past, x)};
    conv.writes = {output_or_empty(args, Out::kOutput)};
    conv.groups = {(length + t.tile - 1) / t.tile, channels, batch};
    SEQRT_RETURN_IF_ERROR(
        check_groups(conv.groups, recorder.limits(), "CausalConvWithState"));
    SEQRT_RETURN_IF_ERROR(recorder.dispatch(conv));
  }
  const BufferSlice present = output_or_empty(args, Out::kPresentState);
  if (present.empty() || d.kernel <= 1) return Status::ok();
  Dispatch state;
  state.shader = "seq_causal_conv_state";
  state.specialization = {std::min<uint32_t>(t.invocations, 64), t.kernel - 1};
  state.push_constants = push_bytes({batch, channels, length, flags});
  // With L = 0 the input is empty: past_state stands in (never read).
  const BufferSlice in = or_stand_in(x, past);
  state.reads = {in, or_stand_in(past, in)};
  state.writes = {present};
  state.groups = {channels, batch, 1};
  SEQRT_RETURN_IF_ERROR(
      check_groups(state.groups, recorder.limits(), "CausalConvWithState"));
  return recorder.dispatch(state);
}

}  // namespace

void register_sequence_conv_kernels(KernelTable& table) {
  VulkanKernel kernel;
  kernel.domain = kOnnxDomain;
  kernel.op = "CausalConvWithState";
  kernel.supports = [](const Graph& graph, const Node& node,
                       const DeviceLimits&) -> Status {
    SEQRT_RETURN_IF_ERROR(require_fp32(graph, node, "CausalConvWithState"));
    return CausalConvAttrs::from(node).status();
  };
  kernel.plan = plan_conv;
  kernel.record = record_conv;
  table.add(std::move(kernel));
}

}  // namespace seqrt::vulkan
