// ONNX LinearAttention (opset 27) on Vulkan: the recurrent form (shader
// seq_linear_attention, one dispatch over every (batch, kv head) and value
// column) for the rules linear, gated, delta and gated_delta; the chunked
// form of linear and gated (three passes, below); the delta rules in
// chunks in sequence_linear_attention_delta.cc.
#include "backends/vulkan/kernels/sequence_linear_attention.h"
#include "backends/vulkan/kernels/sequence_util.h"
#include "backends/vulkan/tiling.h"

namespace seqrt::vulkan {
namespace {

using In = LinearAttentionInput;
using Out = LinearAttentionOutput;
constexpr uint32_t kUseDecay = kLaUseDecay, kDecayPerKey = kLaDecayPerKey,
                   kUseBeta = kLaUseBeta, kBetaPerHead = kLaBetaPerHead,
                   kHasPast = kLaHasPast, kHasPresent = kLaHasPresent;

// The op's own check (ops/sequence/linear_attention.h) on the planned
// dims, as the shaders take it.
Result<LinearDims> linear_dims(const NodeArgs& args) {
  SEQRT_ASSIGN_OR_RETURN(
      LinearAttentionProblem p,
      check_linear_attention(*args.node, input_types(args, In::kCount)));
  LinearDims d{};
  d.batch = p.batch;
  d.seq = p.seq;
  d.q_heads = p.q_heads;
  d.kv_heads = p.kv_heads;
  d.dk = p.dk;
  d.dv = p.dv;
  d.gate_flags = 0;
  if (rule_uses_decay(p.rule)) {
    d.gate_flags |= kUseDecay;
    if (p.decay_per_key) d.gate_flags |= kDecayPerKey;
  }
  if (rule_uses_beta(p.rule)) {
    d.gate_flags |= kUseBeta;
    if (p.beta_per_head) d.gate_flags |= kBetaPerHead;
  }
  d.scale = static_cast<float>(p.scale);
  d.chunk_size = p.chunk_size;
  return d;
}

Result<KernelTiling> plan(const NodeArgs& args, const DeviceLimits& limits) {
  SEQRT_ASSIGN_OR_RETURN(LinearDims d, linear_dims(args));
  if (auto delta =
          plan_linear_attention_delta_chunked(d, d.chunk_size, limits)) {
    return *delta;
  }
  return plan_linear_attention_form(d.dk, d.dv, d.seq, d.q_heads / d.kv_heads,
                                    d.batch * d.kv_heads, d.chunk_size,
                                    (d.gate_flags & kUseBeta) != 0, limits);
}

uint32_t u32(int64_t value) { return static_cast<uint32_t>(value); }

// The chunked form (rules without β): three passes, the chunk states in
// scratch memory, one per chunk.
Status record_chunked(const NodeArgs& args, const LinearDims& d, uint32_t flags,
                      const BufferSlice& decay, const KernelTiling& tiling,
                      Recorder& recorder) {
  const uint32_t chunk = tiling.constants[1];
  const int64_t bg = d.batch * d.kv_heads;
  const int64_t chunks = (d.seq + chunk - 1) / chunk;
  const int64_t state = d.dk * d.dv;
  if (chunks == 0) return Status::ok();
  SEQRT_ASSIGN_OR_RETURN(
      BufferSlice states,
      recorder.scratch(4 * static_cast<VkDeviceSize>(bg * chunks * state)));
  SEQRT_ASSIGN_OR_RETURN(
      BufferSlice decays,
      recorder.scratch(4 * static_cast<VkDeviceSize>(bg * chunks * d.dk)));
  SEQRT_ASSIGN_OR_RETURN(BufferSlice spare, recorder.scratch(4));
  const BufferSlice q = input_or_empty(args, In::kQuery);
  const BufferSlice k = input_or_empty(args, In::kKey);
  const BufferSlice v = input_or_empty(args, In::kValue);
  const std::vector<uint8_t> words = push_bytes(
      {u32(d.batch), u32(d.seq), u32(d.q_heads), u32(d.kv_heads), u32(d.dk),
       u32(d.dv), flags, float_word(d.scale), chunk, u32(chunks)});
  const uint32_t element_groups = u32((state + 63) / 64);
  const std::string what = "LinearAttention";

  Dispatch update;
  update.shader = "seq_linear_attention_chunk_update";
  update.push_constants = words;
  update.reads = {k, v, or_stand_in(decay, q)};
  update.writes = {states, decays};
  update.groups = {element_groups, u32(chunks), u32(bg)};
  SEQRT_RETURN_IF_ERROR(check_groups(update.groups, recorder.limits(), what));
  SEQRT_RETURN_IF_ERROR(recorder.dispatch(update));

  Dispatch scan;
  scan.shader = "seq_linear_attention_chunk_scan";
  scan.push_constants = words;
  scan.reads = {or_stand_in(input_or_empty(args, In::kPastState), q), decays};
  scan.writes = {states, or_stand_in(output_or_empty(args, 1), spare)};
  scan.groups = {element_groups, u32(bg), 1};
  SEQRT_RETURN_IF_ERROR(check_groups(scan.groups, recorder.limits(), what));
  SEQRT_RETURN_IF_ERROR(recorder.dispatch(scan));

  Dispatch output;
  output.shader = "seq_linear_attention_chunk_output";
  output.specialization = {tiling.constants[0], chunk, tiling.constants[2]};
  output.push_constants = words;
  output.reads = {q, k, v, or_stand_in(decay, q), states};
  output.writes = {or_stand_in(output_or_empty(args, 0), spare)};
  output.groups = {u32(chunks), u32(bg), 1};
  SEQRT_RETURN_IF_ERROR(check_groups(output.groups, recorder.limits(), what));
  return recorder.dispatch(output);
}

Status record(const NodeArgs& args, const KernelTiling& tiling,
              Recorder& recorder) {
  SEQRT_ASSIGN_OR_RETURN(LinearDims d, linear_dims(args));
  if (d.batch == 0) return Status::ok();
  const BufferSlice q = input_or_empty(args, In::kQuery);
  const BufferSlice past = input_or_empty(args, In::kPastState);
  const BufferSlice present = output_or_empty(args, 1);
  uint32_t flags = d.gate_flags;
  if (!past.empty()) flags |= kHasPast;
  if (!present.empty()) flags |= kHasPresent;
  const BufferSlice decay = (flags & kUseDecay) != 0
                                ? input_or_empty(args, In::kDecay)
                                : BufferSlice{};
  const BufferSlice beta =
      (flags & kUseBeta) != 0 ? input_or_empty(args, In::kBeta) : BufferSlice{};
  if (is_delta_chunked_linear_attention(tiling)) {
    return record_linear_attention_delta_chunked(args, d, flags, tiling,
                                                 recorder);
  }
  if (is_chunked_linear_attention(tiling)) {
    return record_chunked(args, d, flags, decay, tiling, recorder);
  }
  SEQRT_ASSIGN_OR_RETURN(LinearAttentionTiling t,
                         linear_attention_tiling_from(tiling));
  SEQRT_ASSIGN_OR_RETURN(BufferSlice spare, recorder.scratch(4));
  SegmentedDispatch call;
  Dispatch& dispatch = call.base;
  dispatch.shader = "seq_linear_attention";
  dispatch.specialization = {tiling.constants.begin(),
                             tiling.constants.begin() + 8};
  call.words = {static_cast<uint32_t>(d.batch),
                static_cast<uint32_t>(d.seq),
                static_cast<uint32_t>(d.q_heads),
                static_cast<uint32_t>(d.kv_heads),
                static_cast<uint32_t>(d.dk),
                static_cast<uint32_t>(d.dv),
                flags,
                float_word(d.scale)};
  call.flags_word = 6;
  call.has_past = kHasPast;
  call.has_present = kHasPresent;
  call.past_read = In::kPastState;
  call.present_write = 1;
  dispatch.reads = {q,
                    input_or_empty(args, In::kKey),
                    input_or_empty(args, In::kValue),
                    or_stand_in(past, q),
                    or_stand_in(decay, q),
                    or_stand_in(beta, q)};
  dispatch.writes = {or_stand_in(output_or_empty(args, 0), spare),
                     or_stand_in(present, spare)};
  dispatch.groups = {static_cast<uint32_t>(d.dv / t.columns),
                     static_cast<uint32_t>(d.batch * d.kv_heads), 1};
  SEQRT_RETURN_IF_ERROR(
      check_groups(dispatch.groups, recorder.limits(), "LinearAttention"));
  return record_segments(
      call, d.seq, t.segment,
      4 * static_cast<uint64_t>(d.batch * d.kv_heads * d.dk * d.dv), recorder);
}

}  // namespace

void register_sequence_linear_attention_kernels(KernelTable& table) {
  VulkanKernel kernel;
  kernel.domain = kOnnxDomain;
  kernel.op = "LinearAttention";
  kernel.supports = [](const Graph& graph, const Node& node,
                       const DeviceLimits&) {
    return require_fp32(graph, node, "LinearAttention");
  };
  kernel.plan = plan;
  kernel.record = record;
  table.add(std::move(kernel));
}

}  // namespace seqrt::vulkan
