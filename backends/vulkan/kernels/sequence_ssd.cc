// seqrt::SSD (Mamba-2) on Vulkan. Recurrent form (shader seq_ssd): one
// dispatch over every (batch, head) and head column, for steps and short
// prompts. Chunked form for long prompts (seq_ssd_chunk_update, _scan,
// _output): the state is stored once per chunk and the chunks' outputs run
// in parallel.
#include "backends/vulkan/kernels/sequence_util.h"
#include "backends/vulkan/tiling.h"
#include "ops/sequence/ssd.h"

namespace seqrt::vulkan {
namespace {

using In = SsdInput;
using Out = SsdOutput;
constexpr uint32_t kHasPast = 1, kHasPresent = 2, kHasSkip = 4, kHasZ = 8,
                   kHasBias = 16, kSoftplus = 32;

// The contract's sizes and attributes (ops/sequence/ssd.h).
struct SsdCall {
  SsdDims dims;
  SsdAttrs attrs;
};

bool given(const NodeArgs& args, size_t i) {
  return i < args.inputs.size() && !args.inputs[i].empty();
}

Result<SsdCall> ssd_call(const NodeArgs& args) {
  SEQRT_ASSIGN_OR_RETURN(SsdAttrs attrs, SsdAttrs::from(*args.node));
  SEQRT_ASSIGN_OR_RETURN(SsdDims dims,
                         check_ssd(*args.node, input_types(args, In::kCount)));
  return SsdCall{dims, attrs};
}

Result<KernelTiling> plan(const NodeArgs& args, const DeviceLimits& limits) {
  SEQRT_ASSIGN_OR_RETURN(SsdCall call, ssd_call(args));
  const SsdDims& c = call.dims;
  return plan_ssd_form(c.head_dim, c.state, c.length, c.batch * c.heads,
                       call.attrs.chunk_size, limits);
}

uint32_t u32(int64_t value) { return static_cast<uint32_t>(value); }

// Three passes; the chunk states live in scratch memory, one per chunk.
Status record_chunked(const NodeArgs& args, const SsdCall& call, uint32_t flags,
                      const KernelTiling& tiling, Recorder& recorder) {
  const SsdDims& c = call.dims;
  SEQRT_ASSIGN_OR_RETURN(ChunkTiling t, retention_chunk_tiling_from(tiling));
  const int64_t bh = c.batch * c.heads;
  const int64_t chunks = (c.length + t.chunk - 1) / t.chunk;
  const int64_t state = c.head_dim * c.state;
  if (chunks == 0) return Status::ok();
  SEQRT_ASSIGN_OR_RETURN(
      BufferSlice states,
      recorder.scratch(4 * static_cast<VkDeviceSize>(bh * chunks * state)));
  SEQRT_ASSIGN_OR_RETURN(
      BufferSlice decays,
      recorder.scratch(4 * static_cast<VkDeviceSize>(bh * chunks)));
  SEQRT_ASSIGN_OR_RETURN(BufferSlice spare, recorder.scratch(4));
  const BufferSlice x = input_or_empty(args, In::kX);
  auto in = [&](size_t i) { return or_stand_in(input_or_empty(args, i), x); };
  const std::vector<uint8_t> words = push_bytes(
      {u32(c.batch), u32(c.length), u32(c.heads), u32(c.head_dim), u32(c.state),
       u32(c.groups), flags, float_word(call.attrs.dt_min),
       float_word(call.attrs.dt_max), t.chunk, u32(chunks)});
  const uint32_t element_groups = u32((state + 63) / 64);

  Dispatch update;
  update.shader = "seq_ssd_chunk_update";
  update.push_constants = words;
  update.reads = {x, in(In::kDt), in(In::kA), in(In::kBm), in(In::kDtBias)};
  update.writes = {states, decays};
  update.groups = {element_groups, u32(chunks), u32(bh)};
  SEQRT_RETURN_IF_ERROR(check_groups(update.groups, recorder.limits(), "SSD"));
  SEQRT_RETURN_IF_ERROR(recorder.dispatch(update));

  Dispatch scan;
  scan.shader = "seq_ssd_chunk_scan";
  scan.push_constants = words;
  scan.reads = {in(In::kPastState), decays};
  scan.writes = {states,
                 or_stand_in(output_or_empty(args, Out::kPresentState), spare)};
  scan.groups = {element_groups, u32(bh), 1};
  SEQRT_RETURN_IF_ERROR(check_groups(scan.groups, recorder.limits(), "SSD"));
  SEQRT_RETURN_IF_ERROR(recorder.dispatch(scan));

  Dispatch output;
  output.shader = "seq_ssd_chunk_output";
  output.specialization = {t.invocations, t.chunk};
  output.push_constants = words;
  // Every input but the past state, then the chunk states.
  for (size_t i = 0; i < In::kPastState; ++i) output.reads.push_back(in(i));
  output.reads.push_back(states);
  output.writes = {or_stand_in(output_or_empty(args, Out::kY), spare)};
  output.groups = {u32(chunks), u32(bh), 1};
  SEQRT_RETURN_IF_ERROR(check_groups(output.groups, recorder.limits(), "SSD"));
  return recorder.dispatch(output);
}

Status record(const NodeArgs& args, const KernelTiling& tiling,
              Recorder& recorder) {
  SEQRT_ASSIGN_OR_RETURN(SsdCall ssd, ssd_call(args));
  const SsdDims& c = ssd.dims;
  if (c.batch * c.heads == 0 || c.head_dim == 0) return Status::ok();
  const BufferSlice x = input_or_empty(args, In::kX);
  const BufferSlice present = output_or_empty(args, Out::kPresentState);
  uint32_t flags = 0;
  if (given(args, In::kPastState)) flags |= kHasPast;
  if (!present.empty()) flags |= kHasPresent;
  if (given(args, In::kD)) flags |= kHasSkip;
  if (given(args, In::kZ)) flags |= kHasZ;
  if (given(args, In::kDtBias)) flags |= kHasBias;
  if (ssd.attrs.dt_softplus) flags |= kSoftplus;
  if (is_chunked_ssd(tiling)) {
    return record_chunked(args, ssd, flags, tiling, recorder);
  }
  SEQRT_ASSIGN_OR_RETURN(ScanTiling t, scan_tiling_from(tiling));
  SEQRT_ASSIGN_OR_RETURN(BufferSlice spare, recorder.scratch(4));
  SegmentedDispatch call;
  Dispatch& dispatch = call.base;
  dispatch.shader = "seq_ssd";
  dispatch.specialization = scan_constants(t);
  call.words = {static_cast<uint32_t>(c.batch),
                static_cast<uint32_t>(c.length),
                static_cast<uint32_t>(c.heads),
                static_cast<uint32_t>(c.head_dim),
                static_cast<uint32_t>(c.state),
                static_cast<uint32_t>(c.groups),
                flags,
                float_word(ssd.attrs.dt_min),
                float_word(ssd.attrs.dt_max)};
  call.flags_word = 6;
  call.has_past = kHasPast;
  call.has_present = kHasPresent;
  call.past_read = In::kPastState;
  call.present_write = Out::kPresentState;
  for (size_t i = 0; i < In::kCount; ++i) {
    dispatch.reads.push_back(or_stand_in(input_or_empty(args, i), x));
  }
  dispatch.writes = {or_stand_in(output_or_empty(args, Out::kY), spare),
                     or_stand_in(present, spare)};
  dispatch.groups = {static_cast<uint32_t>(c.head_dim / t.channels),
                     static_cast<uint32_t>(c.batch * c.heads), 1};
  SEQRT_RETURN_IF_ERROR(
      check_groups(dispatch.groups, recorder.limits(), "SSD"));
  return record_segments(
      call, c.length, t.segment,
      4 * static_cast<uint64_t>(c.batch * c.heads * c.head_dim * c.state),
      recorder);
}

}  // namespace

void register_sequence_ssd_kernels(KernelTable& table) {
  VulkanKernel kernel;
  kernel.domain = kSeqrtDomain;
  kernel.op = "SSD";
  kernel.supports = [](const Graph& graph, const Node& node,
                       const DeviceLimits&) {
    return require_fp32(graph, node, "SSD");
  };
  kernel.plan = plan;
  kernel.record = record;
  table.add(std::move(kernel));
}

}  // namespace seqrt::vulkan
