// seqrt::Retention on Vulkan. Recurrent form (shader seq_retention): one
// dispatch over every (batch, head) and value column. Chunkwise form for
// long prompts (seq_retention_chunk_update, _scan, _output): the state is
// stored once per chunk and the chunks' outputs run in parallel. The
// decays go to the shaders as a small buffer filled by the recorder.
#include "backends/vulkan/kernels/sequence_util.h"
#include "backends/vulkan/tiling.h"
#include "ops/sequence/retention.h"

namespace seqrt::vulkan {
namespace {

using In = RetentionInput;
using Out = RetentionOutput;
constexpr uint32_t kHasPast = 1, kHasPresent = 2;

// The op's own check (ops/sequence/retention.h), on the planned dims.
Result<RetentionProblem> retention_problem(const NodeArgs& args) {
  return check_retention(*args.node, input_types(args, In::kCount));
}

Result<KernelTiling> plan(const NodeArgs& args, const DeviceLimits& limits) {
  SEQRT_ASSIGN_OR_RETURN(RetentionProblem d, retention_problem(args));
  return plan_retention_form(d.dk, d.dv, d.seq, d.batch * d.heads, d.chunk_size,
                             limits);
}

// γ_h as a device buffer, one word per head.
Result<BufferSlice> decay_buffer(const RetentionProblem& d,
                                 Recorder& recorder) {
  const std::vector<double>& decay = d.gammas;
  SEQRT_ASSIGN_OR_RETURN(BufferSlice slice, recorder.scratch(4 * decay.size()));
  for (size_t h = 0; h < decay.size(); ++h) {
    BufferSlice one = slice;
    one.offset += 4 * h;
    one.bytes = 4;
    SEQRT_RETURN_IF_ERROR(
        recorder.fill(one, float_word(static_cast<float>(decay[h]))));
  }
  return slice;
}

uint32_t u32(int64_t value) { return static_cast<uint32_t>(value); }

// Three passes; the chunk states live in scratch memory, one per chunk.
Status record_chunkwise(const NodeArgs& args, const RetentionProblem& d,
                        const KernelTiling& tiling, Recorder& recorder) {
  SEQRT_ASSIGN_OR_RETURN(ChunkTiling t, retention_chunk_tiling_from(tiling));
  SEQRT_ASSIGN_OR_RETURN(BufferSlice decay, decay_buffer(d, recorder));
  const int64_t bh = d.batch * d.heads;
  const int64_t chunks = (d.seq + t.chunk - 1) / t.chunk;
  const int64_t state = d.dk * d.dv;
  if (bh == 0 || chunks == 0) return Status::ok();
  SEQRT_ASSIGN_OR_RETURN(
      BufferSlice states,
      recorder.scratch(4 * static_cast<VkDeviceSize>(bh * chunks * state)));
  SEQRT_ASSIGN_OR_RETURN(BufferSlice spare, recorder.scratch(4));
  const BufferSlice q = input_or_empty(args, In::kQ);
  const BufferSlice past = input_or_empty(args, In::kPastState);
  const BufferSlice present = output_or_empty(args, Out::kPresentState);
  uint32_t flags = past.empty() ? 0 : kHasPast;
  if (!present.empty()) flags |= kHasPresent;
  const uint32_t scale = float_word(static_cast<float>(d.scale));
  const uint32_t element_groups = u32((state + 63) / 64);

  Dispatch update;
  update.shader = "seq_retention_chunk_update";
  update.push_constants =
      push_bytes({u32(bh), u32(d.heads), u32(d.seq), u32(d.dk), u32(d.dv),
                  t.chunk, u32(chunks), scale});
  update.reads = {input_or_empty(args, In::kK), input_or_empty(args, In::kV),
                  decay};
  update.writes = {states};
  update.groups = {element_groups, u32(chunks), u32(bh)};
  SEQRT_RETURN_IF_ERROR(
      check_groups(update.groups, recorder.limits(), "Retention"));
  SEQRT_RETURN_IF_ERROR(recorder.dispatch(update));

  Dispatch scan;
  scan.shader = "seq_retention_chunk_scan";
  scan.push_constants =
      push_bytes({u32(bh), u32(d.heads), u32(d.seq), u32(d.dk), u32(d.dv),
                  t.chunk, u32(chunks), flags});
  scan.reads = {or_stand_in(past, q), decay};
  scan.writes = {states, or_stand_in(present, spare)};
  scan.groups = {element_groups, u32(bh), 1};
  SEQRT_RETURN_IF_ERROR(
      check_groups(scan.groups, recorder.limits(), "Retention"));
  SEQRT_RETURN_IF_ERROR(recorder.dispatch(scan));

  Dispatch output;
  output.shader = "seq_retention_chunk_output";
  output.specialization = {t.invocations, t.chunk};
  output.push_constants = update.push_constants;
  output.reads = {q, input_or_empty(args, In::kK), input_or_empty(args, In::kV),
                  decay, states};
  output.writes = {or_stand_in(output_or_empty(args, Out::kY), spare)};
  output.groups = {u32(chunks), u32(bh), 1};
  SEQRT_RETURN_IF_ERROR(
      check_groups(output.groups, recorder.limits(), "Retention"));
  return recorder.dispatch(output);
}

Status record(const NodeArgs& args, const KernelTiling& tiling,
              Recorder& recorder) {
  SEQRT_ASSIGN_OR_RETURN(RetentionProblem d, retention_problem(args));
  if (is_chunkwise_retention(tiling)) {
    return record_chunkwise(args, d, tiling, recorder);
  }
  SEQRT_ASSIGN_OR_RETURN(ScanTiling t, scan_tiling_from(tiling));
  const BufferSlice q = input_or_empty(args, In::kQ);
  const BufferSlice past = input_or_empty(args, In::kPastState);
  const BufferSlice present = output_or_empty(args, Out::kPresentState);
  uint32_t flags = past.empty() ? 0 : kHasPast;
  if (!present.empty()) flags |= kHasPresent;

  SEQRT_ASSIGN_OR_RETURN(BufferSlice decay_slice, decay_buffer(d, recorder));
  SEQRT_ASSIGN_OR_RETURN(BufferSlice spare, recorder.scratch(4));
  SegmentedDispatch call;
  Dispatch& dispatch = call.base;
  dispatch.shader = "seq_retention";
  dispatch.specialization = scan_constants(t);
  dispatch.specialization.push_back(0);  // no store counter
  call.words = {u32(d.batch),
                u32(d.heads),
                u32(d.seq),
                u32(d.dk),
                u32(d.dv),
                flags,
                float_word(static_cast<float>(d.scale))};
  call.flags_word = 5;
  call.has_past = kHasPast;
  call.has_present = kHasPresent;
  call.past_read = 3;  // in dispatch.reads below
  call.present_write = Out::kPresentState;
  dispatch.reads = {q, input_or_empty(args, In::kK),
                    input_or_empty(args, In::kV), or_stand_in(past, q),
                    decay_slice};
  dispatch.writes = {or_stand_in(output_or_empty(args, Out::kY), spare),
                     or_stand_in(present, spare), spare};
  dispatch.groups = {static_cast<uint32_t>(d.dv / t.channels),
                     static_cast<uint32_t>(d.batch * d.heads), 1};
  SEQRT_RETURN_IF_ERROR(
      check_groups(dispatch.groups, recorder.limits(), "Retention"));
  return record_segments(
      call, d.seq, t.segment,
      4 * static_cast<uint64_t>(d.batch * d.heads * d.dk * d.dv), recorder);
}

}  // namespace

void register_sequence_retention_kernels(KernelTable& table) {
  VulkanKernel kernel;
  kernel.domain = kSeqrtDomain;
  kernel.op = "Retention";
  kernel.supports = [](const Graph& graph, const Node& node,
                       const DeviceLimits&) {
    return require_fp32(graph, node, "Retention");
  };
  kernel.plan = plan;
  kernel.record = record;
  table.add(std::move(kernel));
}

}  // namespace seqrt::vulkan
