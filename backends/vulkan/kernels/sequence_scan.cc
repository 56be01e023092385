// SelectiveScan (Mamba-1, OPS.md) on Vulkan: one dispatch over all
// channels and batch rows; the tiling (tiling.h) becomes the shader's
// specialisation constants.
#include "backends/vulkan/kernels/sequence_scan.h"

#include "backends/vulkan/kernels/sequence_util.h"
#include "backends/vulkan/tiling.h"
#include "ops/sequence/selective_scan.h"

namespace seqrt::vulkan {
namespace {

using In = SelectiveScanInput;
using Out = SelectiveScanOutput;
constexpr uint32_t kHasPast = 1, kHasPresent = 2, kHasSkip = 4, kHasZ = 8,
                   kHasBias = 16, kSoftplus = 32;

Result<SelectiveScanDims> scan_dims(const NodeArgs& args) {
  return check_selective_scan(*args.node, input_types(args, In::kCount));
}

}  // namespace

Result<KernelTiling> plan_selective_scan_node(const NodeArgs& args,
                                              const DeviceLimits& limits) {
  SEQRT_ASSIGN_OR_RETURN(SelectiveScanDims d, scan_dims(args));
  return plan_selective_scan({d.channels / d.groups, d.state, d.length},
                             limits);
}

Status record_selective_scan(const NodeArgs& args, const KernelTiling& tiling,
                             Recorder& recorder,
                             const BufferSlice* store_counter) {
  SEQRT_ASSIGN_OR_RETURN(SelectiveScanDims dims, scan_dims(args));
  SEQRT_ASSIGN_OR_RETURN(ScanTiling t, scan_tiling_from(tiling));
  const BufferSlice u = input_or_empty(args, In::kU);
  const BufferSlice present = output_or_empty(args, Out::kPresentState);
  uint32_t flags = 0;
  if (!input_or_empty(args, In::kPastState).empty()) flags |= kHasPast;
  if (!present.empty()) flags |= kHasPresent;
  if (!input_or_empty(args, In::kDskip).empty()) flags |= kHasSkip;
  if (!input_or_empty(args, In::kZ).empty()) flags |= kHasZ;
  if (!input_or_empty(args, In::kDeltaBias).empty()) flags |= kHasBias;
  if (SelectiveScanAttrs::from(*args.node).delta_softplus) flags |= kSoftplus;

  // Bindings the shader declares but this call does not use get a small
  // scratch word it never touches.
  SEQRT_ASSIGN_OR_RETURN(BufferSlice spare, recorder.scratch(4));
  SegmentedDispatch call;
  Dispatch& dispatch = call.base;
  dispatch.shader = "seq_selective_scan";
  dispatch.specialization = scan_constants(t);
  dispatch.specialization.push_back(store_counter != nullptr ? 1u : 0u);
  call.words = {
      static_cast<uint32_t>(dims.batch),  static_cast<uint32_t>(dims.channels),
      static_cast<uint32_t>(dims.length), static_cast<uint32_t>(dims.state),
      static_cast<uint32_t>(dims.groups), flags};
  call.flags_word = 5;
  call.has_past = kHasPast;
  call.has_present = kHasPresent;
  call.past_read = In::kPastState;
  call.present_write = Out::kPresentState;
  for (size_t i = 0; i < In::kCount; ++i) {
    dispatch.reads.push_back(or_stand_in(input_or_empty(args, i), u));
  }
  dispatch.writes = {or_stand_in(output_or_empty(args, Out::kY), spare),
                     or_stand_in(present, spare),
                     store_counter != nullptr ? *store_counter : spare};
  dispatch.groups = {static_cast<uint32_t>(dims.channels / t.channels),
                     static_cast<uint32_t>(dims.batch), 1};
  SEQRT_RETURN_IF_ERROR(
      check_groups(dispatch.groups, recorder.limits(), "SelectiveScan"));
  return record_segments(
      call, dims.length, t.segment,
      4 * static_cast<uint64_t>(dims.batch * dims.channels * dims.state),
      recorder);
}

void register_sequence_scan_kernels(KernelTable& table) {
  VulkanKernel kernel;
  kernel.domain = kSeqrtDomain;
  kernel.op = "SelectiveScan";
  kernel.supports = [](const Graph& graph, const Node& node,
                       const DeviceLimits&) {
    return require_fp32(graph, node, "SelectiveScan");
  };
  kernel.plan = plan_selective_scan_node;
  kernel.record = [](const NodeArgs& args, const KernelTiling& tiling,
                     Recorder& recorder) {
    return record_selective_scan(args, tiling, recorder, nullptr);
  };
  table.add(std::move(kernel));
}

}  // namespace seqrt::vulkan
