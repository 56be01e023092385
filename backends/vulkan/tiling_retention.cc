// The choice between recurrent and chunked forms of Retention and SSD, and
// the chunked tiling (tiling.h): both run three passes (chunk states in
// parallel, a scan over chunks, every chunk's outputs in parallel from a
// C x C score matrix in shared memory).
#include <fmt/format.h>

#include <algorithm>

#include "backends/vulkan/tiling.h"

namespace seqrt::vulkan {
namespace {

constexpr uint32_t kMaxChunk = 64;
constexpr uint32_t kOutputInvocations = 64;

// The output pass's shared floats: the score matrix, and for SSD the
// chunk's steps and their cumulative sums.
uint32_t chunk_shared_bytes(const ChunkTiling& t, bool ssd) {
  return 4 * (t.chunk * t.chunk + (ssd ? 2 * t.chunk : 0));
}

// Loop iterations of one output-pass invocation (tiling.h,
// kMaxLoopIterations): the score matrix (a dot over `key_width` each), then
// its rows' outputs (a sum over the chunk and one over `key_width`).
uint64_t output_pass_loops(const ChunkTiling& t, int64_t key_width,
                           int64_t value_width) {
  const uint64_t wg = t.invocations, c = t.chunk;
  const uint64_t kw = static_cast<uint64_t>(key_width);
  const uint64_t vw = static_cast<uint64_t>(value_width);
  return (c * c + wg - 1) / wg * (1 + kw) +
         (c * vw + wg - 1) / wg * (1 + c + kw) + c + 16;
}

Result<KernelTiling> plan_chunked(const char* op, bool ssd, int64_t length,
                                  int64_t chunk_hint, int64_t key_width,
                                  int64_t value_width,
                                  const DeviceLimits& limits) {
  if (chunk_hint <= 0) {
    return invalid_argument("{} (vulkan): chunk_size must be positive, got {}",
                            op, chunk_hint);
  }
  ChunkTiling t;
  t.invocations = std::min(limits.max_invocations, kOutputInvocations);
  if (t.invocations == 0) {
    return invalid_argument(
        "{} (vulkan): device reports 0 invocations per workgroup", op);
  }
  uint32_t want = 1;
  while (want * 2 <= std::min<int64_t>(chunk_hint, kMaxChunk) &&
         want < length) {
    want *= 2;
  }
  auto too_big = [&] {
    return chunk_shared_bytes(t, ssd) > limits.shared_memory_bytes ||
           output_pass_loops(t, key_width, value_width) > kMaxLoopIterations;
  };
  for (t.chunk = want; t.chunk > 1 && too_big(); t.chunk /= 2) {
  }
  if (output_pass_loops(t, key_width, value_width) > kMaxLoopIterations) {
    return unsupported(
        "{} (vulkan): widths {} and {} are too wide for the "
        "chunked form's loop budget",
        op, key_width, value_width);
  }
  if (chunk_shared_bytes(t, ssd) > limits.shared_memory_bytes) {
    return unsupported(
        "{} (vulkan): the chunked form needs {} B of shared memory, the "
        "device allows {} B",
        op, chunk_shared_bytes(t, ssd), limits.shared_memory_bytes);
  }
  KernelTiling out;
  out.state_place = "device memory, once per chunk";
  out.summary = fmt::format(
      "chunked, chunk {} ({} chunks): chunk states in parallel, a scan "
      "over chunks, outputs from a {}x{} score matrix ({} invocations)",
      t.chunk, (length + t.chunk - 1) / t.chunk, t.chunk, t.chunk,
      t.invocations);
  out.shared_bytes = chunk_shared_bytes(t, ssd);
  out.shared_limit = limits.shared_memory_bytes;
  out.constants = {t.invocations, t.chunk};
  return out;
}

// The chunked plan when the sequence is long enough and every chunk's
// state (`state_floats` per batch·head) fits one binding, else `recurrent`.
template <typename Recurrent>
Result<KernelTiling> choose_form(const char* op, bool ssd, int64_t length,
                                 int64_t batch_heads, int64_t key_width,
                                 int64_t value_width, int64_t chunk_hint,
                                 const DeviceLimits& limits,
                                 Recurrent recurrent) {
  if (limits.chunked_forms() && length >= kChunkedMinLength) {
    Result<KernelTiling> chunked = plan_chunked(op, ssd, length, chunk_hint,
                                                key_width, value_width, limits);
    if (!chunked.is_ok() &&
        chunked.status().code() != StatusCode::kUnsupported) {
      return chunked;
    }
    if (chunked.is_ok()) {
      const uint64_t chunk = chunked->constants[1];
      const uint64_t bytes = 4 * static_cast<uint64_t>(batch_heads) *
                             ((length + chunk - 1) / chunk) * key_width *
                             value_width;
      if (bytes <= limits.max_storage_buffer_range) return chunked;
    }
  }
  return recurrent();
}

}  // namespace

uint32_t retention_chunk_shared_bytes(const ChunkTiling& t) {
  return chunk_shared_bytes(t, false);
}

uint32_t ssd_chunk_shared_bytes(const ChunkTiling& t) {
  return chunk_shared_bytes(t, true);
}

Result<KernelTiling> plan_retention_form(int64_t dk, int64_t dv, int64_t length,
                                         int64_t batch_heads,
                                         int64_t chunk_hint,
                                         const DeviceLimits& limits) {
  return choose_form("Retention", false, length, batch_heads, dk, dv,
                     chunk_hint, limits,
                     [&] { return plan_retention(dk, dv, length, limits); });
}

Result<KernelTiling> plan_ssd_form(int64_t head_dim, int64_t states,
                                   int64_t length, int64_t batch_heads,
                                   int64_t chunk_hint,
                                   const DeviceLimits& limits) {
  return choose_form(
      "SSD", true, length, batch_heads, states, head_dim, chunk_hint, limits,
      [&] { return plan_ssd(head_dim, states, length, limits); });
}

bool is_chunkwise_retention(const KernelTiling& tiling) {
  return tiling.constants.size() == 2;
}

bool is_chunked_ssd(const KernelTiling& tiling) {
  return tiling.constants.size() == 2;
}

Result<ChunkTiling> retention_chunk_tiling_from(const KernelTiling& tiling) {
  const std::vector<uint32_t>& c = tiling.constants;
  if (c.size() != 2 || c[0] == 0 || c[1] == 0) {
    return internal_error(
        "Retention/SSD (vulkan): tiling constants are not a chunked tiling "
        "({} numbers)",
        c.size());
  }
  return ChunkTiling{c[0], c[1]};
}

}  // namespace seqrt::vulkan
