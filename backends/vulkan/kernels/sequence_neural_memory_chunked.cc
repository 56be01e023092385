// seqrt::NeuralMemory on Vulkan, the chunk-parallel form (shader
// seq_neural_memory_chunk, one pipeline per phase): tokens in rounds that
// never cross a chunk boundary, each round's gradients, retrieval and
// weight update as matrix products over its tokens, every phase a
// dispatch over (elements, batch·heads). The rounds follow each other: the
// anchor of a round is the weights the previous round left. The state
// (weights, momentum, anchor) has the token loop's layout, so a prompt run
// here and decode steps run by the token loop continue each other.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "backends/vulkan/kernels/sequence_neural_memory.h"
#include "backends/vulkan/kernels/sequence_util.h"
#include "backends/vulkan/tiling.h"

namespace seqrt::vulkan {
namespace {

// The shader's PH_* (seq_neural_memory_chunk.comp), in recording order.
enum Phase : uint32_t {
  kInit,
  kCoef,
  kForward,
  kResidual,
  kBack,
  kScoresQ,
  kRetrieve1,
  kScoresA,
  kRetrieve2,
  kUpdate
};
constexpr Phase kDepth1Phases[] = {kCoef, kForward, kScoresQ, kRetrieve1,
                                   kUpdate};
constexpr Phase kDepth2Phases[] = {kCoef,    kForward,   kResidual,
                                   kBack,    kScoresQ,   kRetrieve1,
                                   kScoresA, kRetrieve2, kUpdate};

// constants[kTagAt] marks the tiling as this form's.
constexpr size_t kTagAt = 2;
constexpr uint32_t kChunkedTag = 0x4e4d4348;  // "NMCH"
constexpr uint32_t kMaxInvocations = 256;
// More rounds than this record too many dispatches; the token loop runs.
constexpr int64_t kMaxRounds = 1024;
constexpr uint32_t kPositionMod = 64;  // loop iterations of nm_wide_mod

int64_t rounds(const MemoryCall& c, bool has_position) {
  // A position off the chunk grid adds one partial round at the start.
  const int64_t tokens = has_position ? c.seq + c.chunk - 1 : c.seq;
  return (tokens + c.chunk - 1) / c.chunk;
}

// Elements (one per invocation) of a phase for rounds of `rows` tokens.
int64_t phase_elements(Phase phase, const MemoryCall& c, int64_t rows) {
  const int64_t width = c.depth == 2 ? c.m : c.d;
  switch (phase) {
    case kInit:
    case kUpdate:
      return c.params();
    case kCoef:
      return std::max(c.params(), rows);
    case kForward:
    case kRetrieve1:
      return rows * width;
    case kResidual:
    case kRetrieve2:
      return rows * c.d;
    case kBack:
      return rows * c.m;
    case kScoresQ:
    case kScoresA:
      return rows * rows;
  }
  return 0;
}

}  // namespace

uint64_t neural_memory_chunk_floats(const MemoryCall& c, int64_t rows) {
  const auto n = static_cast<uint64_t>(rows);
  return 2 * n * n + 4 * n + 3 + n * c.d +
         (c.depth == 2 ? 4 * n * static_cast<uint64_t>(c.m) : 0);
}

std::optional<KernelTiling> plan_neural_memory_chunked(
    const MemoryCall& c, const DeviceLimits& limits) {
  const int64_t rows = std::min(c.chunk, c.seq);
  const uint32_t wg = std::min(limits.max_invocations, kMaxInvocations);
  if (!limits.chunked_forms() || rows < kNeuralMemoryChunkedMinRows || wg == 0) {
    return std::nullopt;
  }
  // Every phase gives each invocation one element; its loops run over d,
  // m or the round's tokens (the coefficients: two passes over them).
  const uint64_t loops = static_cast<uint64_t>(std::max(c.d, c.m)) +
                         2 * static_cast<uint64_t>(rows) + kPositionMod;
  const uint64_t scratch =
      4 * neural_memory_chunk_floats(c, rows) * c.batch * c.heads;
  if (loops > kMaxLoopIterations || scratch > limits.max_storage_buffer_range ||
      rounds(c, true) > kMaxRounds) {
    return std::nullopt;
  }
  KernelTiling out;
  out.state_place =
      "device memory (weights, momentum, anchor), formed once per chunk";
  out.summary = fmt::format(
      "chunk-parallel, rounds of up to {} tokens (chunk_size {}), {} phases "
      "per round of {} invocations per workgroup over (elements, batch*heads), "
      "{} B of scratch",
      rows, c.chunk, c.depth == 2 ? 9 : 5, wg, scratch);
  out.shared_bytes = 0;
  out.shared_limit = limits.shared_memory_bytes;
  out.constants = {wg, static_cast<uint32_t>(rows), kChunkedTag};
  return out;
}

bool is_chunked_neural_memory(const KernelTiling& tiling) {
  return tiling.constants.size() == 3 &&
         tiling.constants[kTagAt] == kChunkedTag;
}

Status record_neural_memory_chunked(const NodeArgs& args, const MemoryCall& c,
                                    const KernelTiling& tiling,
                                    Recorder& recorder) {
  const std::vector<uint32_t>& k = tiling.constants;
  if (!is_chunked_neural_memory(tiling) || k[0] == 0 || k[1] == 0) {
    return internal_error(
        "NeuralMemory (vulkan): not a chunk-parallel NeuralMemory tiling");
  }
  const uint32_t wg = k[0];
  const int64_t rows = k[1];
  SEQRT_ASSIGN_OR_RETURN(MemoryBindings bindings,
                         neural_memory_bindings(args, c, recorder));
  SEQRT_ASSIGN_OR_RETURN(
      BufferSlice offsets,
      recorder.scratch(4 * static_cast<VkDeviceSize>(c.batch)));
  SEQRT_ASSIGN_OR_RETURN(
      BufferSlice scratch,
      recorder.scratch(4 * neural_memory_chunk_floats(c, rows) * c.batch *
                       c.heads));
  Dispatch dispatch = std::move(bindings.dispatch);
  dispatch.shader = "seq_neural_memory_chunk";
  dispatch.writes.push_back(offsets);
  dispatch.writes.push_back(scratch);
  const auto bh = static_cast<uint32_t>(c.batch * c.heads);
  auto run = [&](Phase phase, int64_t round) -> Status {
    const int64_t elements = phase_elements(phase, c, rows);
    dispatch.specialization = {wg, phase};
    dispatch.groups = {static_cast<uint32_t>((elements + wg - 1) / wg), bh, 1};
    SEQRT_RETURN_IF_ERROR(
        check_groups(dispatch.groups, recorder.limits(), "NeuralMemory"));
    dispatch.push_constants = push_bytes(
        {static_cast<uint32_t>(c.batch), static_cast<uint32_t>(c.heads),
         static_cast<uint32_t>(c.seq), static_cast<uint32_t>(c.d),
         static_cast<uint32_t>(c.m), static_cast<uint32_t>(c.depth),
         bindings.flags, static_cast<uint32_t>(c.chunk),
         static_cast<uint32_t>(round), static_cast<uint32_t>(rows)});
    return recorder.dispatch(dispatch);
  };
  SEQRT_RETURN_IF_ERROR(run(kInit, 0));
  const bool has_position = (bindings.flags & kNmHasPosition) != 0;
  for (int64_t round = 0; round < rounds(c, has_position); ++round) {
    if (c.depth == 2) {
      for (Phase phase : kDepth2Phases)
        SEQRT_RETURN_IF_ERROR(run(phase, round));
    } else {
      for (Phase phase : kDepth1Phases)
        SEQRT_RETURN_IF_ERROR(run(phase, round));
    }
  }
  return Status::ok();
}

}  // namespace seqrt::vulkan
