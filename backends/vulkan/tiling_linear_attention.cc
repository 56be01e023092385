// Tiling choices for recurrent LinearAttention (tiling.h): the scan's
// shape (value columns for channels, the dk state rows split over
// invocations) with a q tile per query head of the kv head's group.
#include <fmt/format.h>

#include <algorithm>

#include "backends/vulkan/tiling.h"

namespace seqrt::vulkan {
namespace {

constexpr uint32_t kFloat = 4;
constexpr uint32_t kMaxTile = 32;

uint32_t pow2_at_least(uint64_t n) {
  uint32_t p = 1;
  while (p < n && p < (1u << 30)) p <<= 1;
  return p;
}

uint32_t div_up(uint64_t a, uint64_t b) {
  return static_cast<uint32_t>((a + b - 1) / b);
}

uint32_t largest_divisor(uint64_t n, uint32_t cap) {
  for (uint32_t c = static_cast<uint32_t>(std::min<uint64_t>(cap, n)); c > 1;
       --c) {
    if (n % c == 0) return c;
  }
  return 1;
}

// The most columns, then the longest tile, that fit `limit`.
bool fit(LinearAttentionTiling& t, int64_t dv, int64_t length, uint32_t cap,
         uint32_t limit, uint32_t subgroup_size) {
  const uint32_t max_tile =
      std::min(kMaxTile, pow2_at_least(std::max<int64_t>(length, 1)));
  for (uint32_t ch = largest_divisor(dv, cap / t.splits);;
       ch = largest_divisor(dv, ch - 1)) {
    t.columns = ch;
    t.invocations = ch * t.splits;
    const bool whole = subgroup_size > 0 && t.invocations % subgroup_size == 0;
    if (!t.subgroup || whole) {
      for (uint32_t tile = max_tile; tile >= 1; tile /= 2) {
        t.tile = tile;
        if (linear_attention_shared_bytes(t) <= limit) return true;
      }
    }
    if (ch == 1) return false;
  }
}

}  // namespace

uint32_t linear_attention_shared_bytes(const LinearAttentionTiling& t) {
  const uint32_t padded = t.splits * t.rows_per_invocation;
  const uint32_t tiles =
      padded * t.tile * (2 + t.group) + t.tile;  // k, f, q, β
  const uint32_t red =
      t.subgroup || t.splits == 1 ? 1 : t.invocations * t.group;
  const uint32_t state = t.state_shared ? t.columns * padded : 1;
  return kFloat * (tiles + red + state);
}

Result<KernelTiling> plan_linear_attention(int64_t dk, int64_t dv,
                                           int64_t length, int64_t group,
                                           const DeviceLimits& limits) {
  if (dk <= 0 || dv <= 0 || group <= 0) {
    return invalid_argument(
        "LinearAttention (vulkan): needs d_k, d_v and the head group >= 1, "
        "got {}, {}, {}",
        dk, dv, group);
  }
  const uint32_t cap = std::min(limits.max_invocations, kTargetInvocations);
  if (cap == 0) {
    return invalid_argument(
        "LinearAttention (vulkan): device reports 0 invocations per "
        "workgroup");
  }
  LinearAttentionTiling t;
  t.group = static_cast<uint32_t>(group);
  t.splits = 1;
  while (div_up(dk, t.splits) > kRegisterStateFloats && t.splits * 2 <= cap) {
    t.splits *= 2;
  }
  t.rows_per_invocation = div_up(dk, t.splits);
  t.state_shared = t.rows_per_invocation > kRegisterStateFloats;
  const uint32_t sg = limits.subgroup_size;
  t.subgroup = limits.subgroup_arithmetic && sg > 0 && t.splits > 1 &&
               t.splits <= sg && sg % t.splits == 0;
  bool fits = fit(t, dv, length, cap, limits.shared_memory_bytes, sg);
  if (!fits && t.subgroup) {
    t.subgroup = false;
    fits = fit(t, dv, length, cap, limits.shared_memory_bytes, sg);
  }
  if (!fits) {
    t.columns = 1;
    t.invocations = t.splits;
    t.tile = 1;
    return unsupported(
        "LinearAttention (vulkan): d_k = {} with {} query heads per kv head "
        "needs at least {} B of shared memory per workgroup, the device "
        "allows {} B",
        dk, group, linear_attention_shared_bytes(t),
        limits.shared_memory_bytes);
  }
  // Loops per token tile whose trip count is not a small constant:
  // staging (k, f, q rows; β), the tokens and their row and head loops.
  auto loop = [](uint64_t trips) { return trips > 16 ? trips : 0; };
  const uint64_t padded = uint64_t{t.splits} * t.rows_per_invocation;
  const uint64_t per_tile =
      1 + div_up(padded * t.tile, t.invocations) * (1 + loop(t.group)) +
      div_up(t.tile, t.invocations) +
      t.tile * (1 + 2 * loop(t.rows_per_invocation) +
                4 * loop(t.group) * (1 + loop(t.splits)));
  t.segment = segment_tokens(per_tile, t.tile, 2 * t.rows_per_invocation + 16);
  KernelTiling out;
  out.state_place = t.state_shared ? "shared memory" : "registers";
  out.summary = fmt::format(
      "{} value columns x {} state rows per workgroup ({} invocations, {} "
      "rows each), token tile {}, {} reduction{}",
      t.columns, dk, t.invocations, t.rows_per_invocation, t.tile,
      t.splits == 1 ? "no"
      : t.subgroup  ? "subgroup"
                    : "shared-memory",
      length > t.segment ? fmt::format(", {} tokens per dispatch", t.segment)
                         : "");
  out.shared_bytes = linear_attention_shared_bytes(t);
  out.shared_limit = limits.shared_memory_bytes;
  out.constants = {t.invocations,         t.columns, t.splits,
                   t.rows_per_invocation, t.tile,    t.state_shared ? 1u : 0u,
                   t.subgroup ? 1u : 0u,  t.group,   t.segment};
  return out;
}

uint32_t linear_attention_chunk_shared_bytes(const ChunkTiling& t, int64_t dk) {
  return 4 * (t.chunk * t.chunk + t.chunk * static_cast<uint32_t>(dk));
}

Result<KernelTiling> plan_linear_attention_form(int64_t dk, int64_t dv,
                                                int64_t length, int64_t group,
                                                int64_t batch_kv_heads,
                                                int64_t chunk_hint,
                                                bool delta_rule,
                                                const DeviceLimits& limits) {
  auto recurrent = [&] {
    return plan_linear_attention(dk, dv, length, group, limits);
  };
  if (!limits.chunked_forms() || delta_rule || length < kChunkedMinLength ||
      dk <= 0 || dv <= 0 || chunk_hint <= 0) {
    return recurrent();
  }
  ChunkTiling t;
  t.invocations = std::min(limits.max_invocations, 64u);
  // Loops of one output-pass invocation (tiling.h, kMaxLoopIterations):
  // the cumulative decays, then per query head the scores and outputs.
  auto loops = [&] {
    const uint64_t wg = std::max(t.invocations, 1u), c = t.chunk;
    return div_up(dk, wg) * (1 + c) +
           group * (div_up(c * c, wg) * (1 + dk) +
                    div_up(c * dv, wg) * (1 + c + dk) + 1);
  };
  t.chunk = 1;
  while (t.chunk * 2 <= std::min<int64_t>(chunk_hint, 64) && t.chunk < length) {
    t.chunk *= 2;
  }
  while (t.chunk > 1 && (linear_attention_chunk_shared_bytes(t, dk) >
                             limits.shared_memory_bytes ||
                         loops() > kMaxLoopIterations)) {
    t.chunk /= 2;
  }
  const uint64_t chunks = div_up(length, t.chunk);
  const uint64_t state_bytes =
      4 * static_cast<uint64_t>(batch_kv_heads) * chunks * dk * dv;
  if (t.invocations == 0 || t.chunk < 8 ||
      linear_attention_chunk_shared_bytes(t, dk) > limits.shared_memory_bytes ||
      loops() > kMaxLoopIterations ||
      state_bytes > limits.max_storage_buffer_range) {
    return recurrent();
  }
  KernelTiling out;
  out.state_place = "device memory, once per chunk";
  out.summary = fmt::format(
      "chunked, chunk {} ({} chunks): chunk states in parallel, a scan over "
      "chunks, outputs from a {}x{} score matrix per query head ({} "
      "invocations)",
      t.chunk, chunks, t.chunk, t.chunk, t.invocations);
  out.shared_bytes = linear_attention_chunk_shared_bytes(t, dk);
  out.shared_limit = limits.shared_memory_bytes;
  out.constants = {t.invocations, t.chunk, static_cast<uint32_t>(dk)};
  return out;
}

bool is_chunked_linear_attention(const KernelTiling& tiling) {
  return tiling.constants.size() == 3;
}

Result<LinearAttentionTiling> linear_attention_tiling_from(
    const KernelTiling& tiling) {
  const std::vector<uint32_t>& c = tiling.constants;
  if (c.size() != 9 || c[0] != c[1] * c[2] || c[0] == 0 || c[3] == 0 ||
      c[4] == 0 || c[7] == 0 || c[8] == 0) {
    return internal_error(
        "LinearAttention (vulkan): tiling constants are not a linear "
        "attention tiling ({} numbers)",
        c.size());
  }
  return LinearAttentionTiling{c[0],      c[1],      c[2], c[3], c[4],
                               c[5] != 0, c[6] != 0, c[7], c[8]};
}

}  // namespace seqrt::vulkan
