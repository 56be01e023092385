// ONNX LinearAttention's delta rules on Vulkan in chunks (shader
// seq_linear_attention_delta_chunk, one pipeline per phase): per chunk the
// right side and the strictly lower system of the delta values, their
// forward substitution, the outputs and the state after the chunk, each a
// dispatch over (elements, batch·kv heads). The chunks follow each other:
// each starts from the state the previous one left.
#include <fmt/format.h>

#include <algorithm>

#include "backends/vulkan/kernels/sequence_linear_attention.h"
#include "backends/vulkan/kernels/sequence_util.h"
#include "backends/vulkan/tiling.h"

namespace seqrt::vulkan {
namespace {

// The shader's PH_*.
enum Phase : uint32_t { kInit, kSystem, kSolve, kOutput, kState };
constexpr Phase kChunkPhases[] = {kSystem, kSolve, kOutput, kState};

constexpr size_t kTagAt = 3;
constexpr uint32_t kDeltaTag = 0x4c414443;  // "LADC"
constexpr uint32_t kMaxInvocations = 256;
constexpr int64_t kMaxChunk = 64;
// More chunks than this record too many dispatches; the recurrent form runs.
constexpr int64_t kMaxChunks = 1024;

// Per (batch, kv head): U (c×dv), KK (c×c), C (c), QK (group×c×c), as the
// shader's regions.
uint64_t scratch_floats(const LinearDims& d, int64_t chunk) {
  const auto c = static_cast<uint64_t>(chunk);
  const auto group = static_cast<uint64_t>(d.q_heads / d.kv_heads);
  return static_cast<uint64_t>(d.batch * d.kv_heads) *
         (c * static_cast<uint64_t>(d.dv) + c * c + c + group * c * c);
}

int64_t phase_elements(Phase phase, const LinearDims& d, int64_t chunk) {
  switch (phase) {
    case kInit:
    case kState:
      return d.dk * d.dv;
    case kSystem:
      return std::max(chunk * d.dv, (d.q_heads / d.kv_heads) * chunk * chunk);
    case kSolve:
      return d.dv;
    case kOutput:
      return chunk * (d.q_heads / d.kv_heads) * d.dv;
  }
  return 0;
}

uint32_t u32(int64_t value) { return static_cast<uint32_t>(value); }

}  // namespace

std::optional<KernelTiling> plan_linear_attention_delta_chunked(
    const LinearDims& d, int64_t chunk_hint, const DeviceLimits& limits) {
  const bool delta = (d.gate_flags & kLaUseBeta) != 0;
  const bool per_key = (d.gate_flags & kLaDecayPerKey) != 0;
  const uint32_t wg = std::min(limits.max_invocations, kMaxInvocations);
  // On a CPU device the recurrent form, its state in registers, is faster
  // (vulkan_sequence_bench, BM_LinearAttentionDelta on lavapipe: 2.5–3.3×).
  const bool wanted =
      limits.forms == SequenceForms::kChunked ||
      (limits.forms == SequenceForms::kAuto && !limits.cpu_device);
  if (!wanted || !delta || per_key || wg == 0 || d.seq < kChunkedMinLength ||
      d.dk <= 0 || d.dv <= 0 || chunk_hint < 8) {
    return std::nullopt;
  }
  const int64_t chunk = std::min({chunk_hint, kMaxChunk, d.seq});
  const int64_t chunks = (d.seq + chunk - 1) / chunk;
  // The longest loops of one invocation: the substitution's (c²/2), or a
  // score's (its decay gap, then q·k and k·k).
  const uint64_t loops = static_cast<uint64_t>(chunk * chunk) +
                         static_cast<uint64_t>(chunk) * 2 + d.dk;
  const uint64_t scratch = 4 * scratch_floats(d, chunk);
  if (chunks > kMaxChunks || loops > kMaxLoopIterations ||
      scratch > limits.max_storage_buffer_range ||
      4 * static_cast<uint64_t>(d.batch * d.kv_heads * d.dk * d.dv) >
          limits.max_storage_buffer_range) {
    return std::nullopt;
  }
  KernelTiling out;
  out.state_place = "device memory, read and written once per chunk";
  out.summary = fmt::format(
      "delta rule in chunks of {} ({} chunks, one after the other): the "
      "chunk's lower-triangular system solved by forward substitution, "
      "outputs and state as products; 4 phases per chunk of {} invocations "
      "per workgroup over (elements, batch*kv heads), {} B of scratch",
      chunk, chunks, wg, scratch);
  out.shared_bytes = 0;
  out.shared_limit = limits.shared_memory_bytes;
  out.constants = {wg, static_cast<uint32_t>(chunk), 0, kDeltaTag};
  return out;
}

bool is_delta_chunked_linear_attention(const KernelTiling& tiling) {
  return tiling.constants.size() == kTagAt + 1 &&
         tiling.constants[kTagAt] == kDeltaTag;
}

Status record_linear_attention_delta_chunked(const NodeArgs& args,
                                             const LinearDims& d,
                                             uint32_t flags,
                                             const KernelTiling& tiling,
                                             Recorder& recorder) {
  const std::vector<uint32_t>& c = tiling.constants;
  if (!is_delta_chunked_linear_attention(tiling) || c[0] == 0 || c[1] == 0) {
    return internal_error(
        "LinearAttention (vulkan): not a chunked delta-rule tiling");
  }
  const uint32_t wg = c[0];
  const int64_t chunk = c[1];
  const BufferSlice q = input_or_empty(args, LinearAttentionInput::kQuery);
  BufferSlice state = output_or_empty(args, 1);
  if (state.empty()) {
    SEQRT_ASSIGN_OR_RETURN(
        state, recorder.scratch(4 * static_cast<VkDeviceSize>(
                                        d.batch * d.kv_heads * d.dk * d.dv)));
  }
  SEQRT_ASSIGN_OR_RETURN(BufferSlice scratch,
                         recorder.scratch(4 * scratch_floats(d, chunk)));
  SEQRT_ASSIGN_OR_RETURN(BufferSlice spare, recorder.scratch(4));
  Dispatch dispatch;
  dispatch.shader = "seq_linear_attention_delta_chunk";
  for (size_t i = 0; i < LinearAttentionInput::kCount; ++i) {
    BufferSlice input = input_or_empty(args, i);
    if (i == LinearAttentionInput::kDecay && (flags & kLaUseDecay) == 0)
      input = BufferSlice{};
    dispatch.reads.push_back(or_stand_in(input, q));
  }
  dispatch.writes = {or_stand_in(output_or_empty(args, 0), spare), state,
                     scratch};
  const uint32_t bg = u32(d.batch * d.kv_heads);
  auto run = [&](Phase phase, int64_t round) -> Status {
    const int64_t elements = phase_elements(phase, d, chunk);
    dispatch.specialization = {wg, phase};
    dispatch.groups = {u32((elements + wg - 1) / wg), bg, 1};
    SEQRT_RETURN_IF_ERROR(
        check_groups(dispatch.groups, recorder.limits(), "LinearAttention"));
    dispatch.push_constants = push_bytes(
        {u32(d.batch), u32(d.seq), u32(d.q_heads), u32(d.kv_heads), u32(d.dk),
         u32(d.dv), flags, float_word(d.scale), u32(chunk), u32(round)});
    return recorder.dispatch(dispatch);
  };
  SEQRT_RETURN_IF_ERROR(run(kInit, 0));
  for (int64_t round = 0; round * chunk < d.seq; ++round) {
    for (Phase phase : kChunkPhases) SEQRT_RETURN_IF_ERROR(run(phase, round));
  }
  return Status::ok();
}

}  // namespace seqrt::vulkan
