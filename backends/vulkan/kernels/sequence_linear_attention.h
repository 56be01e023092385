// ONNX LinearAttention on Vulkan: what the recurrent and chunked forms
// (sequence_linear_attention.cc) and the chunked delta rules
// (sequence_linear_attention_delta.cc) share.
#pragma once

#include <cstdint>
#include <optional>

#include "backends/vulkan/kernel.h"
#include "ops/sequence/linear_attention.h"

namespace seqrt::vulkan {

// Flag bits, as the shaders' LA_*.
constexpr uint32_t kLaUseDecay = 1, kLaDecayPerKey = 2, kLaUseBeta = 4,
                   kLaBetaPerHead = 8, kLaHasPast = 16, kLaHasPresent = 32;

// The node's sizes, gates (kLaUseDecay... in gate_flags), scale and chunk
// hint, from check_linear_attention.
struct LinearDims {
  int64_t batch, seq, q_heads, kv_heads, dk, dv;
  uint32_t gate_flags;
  float scale;
  int64_t chunk_size = LinearAttentionAttrs::kChunkSizeDefault;
};

// The delta rules (delta; gated_delta with one decay per head) in chunks,
// one after the other, each a few matrix products: the tiling, or nullopt
// where the recurrent form runs (a CPU device, shorter than
// kChunkedMinLength, a decay per key, scratch past one binding's range,
// past the loop budget).
std::optional<KernelTiling> plan_linear_attention_delta_chunked(
    const LinearDims& d, int64_t chunk_hint, const DeviceLimits& limits);
bool is_delta_chunked_linear_attention(const KernelTiling& tiling);
// `flags` has kLaHasPast/kLaHasPresent set as the node's bindings are.
Status record_linear_attention_delta_chunked(const NodeArgs& args,
                                             const LinearDims& d,
                                             uint32_t flags,
                                             const KernelTiling& tiling,
                                             Recorder& recorder);

}  // namespace seqrt::vulkan
