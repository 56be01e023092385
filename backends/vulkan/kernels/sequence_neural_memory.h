// seqrt::NeuralMemory on Vulkan: what the token loop
// (sequence_neural_memory.cc) and the chunk-parallel form
// (sequence_neural_memory_chunked.cc) share.
#pragma once

#include <cstdint>
#include <optional>

#include "backends/vulkan/kernel.h"

namespace seqrt::vulkan {

// The node's sizes and attributes, checked as the reference kernel checks
// them.
struct MemoryCall {
  int64_t batch, heads, seq, d, m, depth, chunk;
  bool gelu, before;
  int64_t params() const { return depth == 2 ? 2 * d * m : d * m; }
};
Result<MemoryCall> neural_memory_call(const NodeArgs& args);

// Flag bits, as the shaders' NM_* (shaders/neural_memory.glsl).
constexpr uint32_t kNmGelu = 1, kNmBefore = 2, kNmHasPast = 4, kNmInit = 8,
                   kNmHasPosition = 16;

// The bindings both shaders take: q ... past_state, position, then y, the
// work state (present_state, or scratch), the error word; and the flags
// (without kNmInit).
struct MemoryBindings {
  Dispatch dispatch;
  uint32_t flags = 0;
};
Result<MemoryBindings> neural_memory_bindings(const NodeArgs& args,
                                              const MemoryCall& c,
                                              Recorder& recorder);

// The chunk-parallel form takes a prompt whose rounds hold at least this
// many tokens (min(chunk_size, T)); shorter ones and decode steps run the
// token loop.
constexpr int64_t kNeuralMemoryChunkedMinRows = 16;

// Floats of scratch one (batch, head) needs for rounds of `rows` tokens, as
// `regions` in shaders/seq_neural_memory_chunk.comp.
uint64_t neural_memory_chunk_floats(const MemoryCall& c, int64_t rows);

// The chunk-parallel tiling, or nullopt where the token loop runs instead
// (rounds too short, scratch past one binding's range, a layer past the
// loop budget).
std::optional<KernelTiling> plan_neural_memory_chunked(
    const MemoryCall& c, const DeviceLimits& limits);
bool is_chunked_neural_memory(const KernelTiling& tiling);
Status record_neural_memory_chunked(const NodeArgs& args, const MemoryCall& c,
                                    const KernelTiling& tiling,
                                    Recorder& recorder);

}  // namespace seqrt::vulkan
