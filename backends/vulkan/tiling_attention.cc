// Tiling choices for Attention (tiling.h): the rows a workgroup owns, the
// split of each row over invocations, the K/V tile length from the
// shared-memory limit, and split-K for single-query decode over long caches.
#include <fmt/format.h>

#include <algorithm>

#include "backends/vulkan/tiling.h"

namespace seqrt::vulkan {
namespace {

constexpr uint32_t kFloat = 4;
constexpr uint32_t kMaxTile = 64;  // keys per tile
// Below this many keys one workgroup per row is enough; decode over longer
// caches cuts the keys into at most kMaxKeySplits runs of >= 2 tiles.
constexpr int64_t kSplitMinKeys = 256;
constexpr uint32_t kMaxKeySplits = 16;

uint32_t pow2_at_least(uint64_t n) {
  uint32_t p = 1;
  while (p < n && p < (1u << 30)) p <<= 1;
  return p;
}

uint32_t div_up(uint64_t a, uint64_t b) {
  return static_cast<uint32_t>((a + b - 1) / b);
}

// The longest power-of-two tile up to `max_tile` that fits `limit` with
// t's rows, or 0.
uint32_t fit_tile(AttentionTiling& t, uint32_t max_tile, uint32_t limit) {
  for (uint32_t tile = max_tile; tile >= 1; tile /= 2) {
    t.tile = tile;
    if (attention_shared_bytes(t) <= limit) return tile;
  }
  return 0;
}

}  // namespace

uint32_t attention_shared_bytes(const AttentionTiling& t) {
  const uint32_t keys = t.tile * t.splits * t.query_per_invocation;
  const uint32_t values = t.tile * t.splits * t.values_per_invocation;
  const uint32_t scores = t.rows * t.tile;
  const uint32_t partial = t.subgroup ? 1 : t.rows * t.splits * t.tile;
  return kFloat * (keys + values + scores + partial) + 8;  // + key range
}

Result<KernelTiling> plan_attention(const AttentionSizes& sizes,
                                    const DeviceLimits& limits) {
  if (sizes.head_dim <= 0 || sizes.value_dim <= 0 || sizes.rows <= 0) {
    return invalid_argument(
        "Attention (vulkan): needs d, dv and query rows >= 1, got {}, {}, {}",
        sizes.head_dim, sizes.value_dim, sizes.rows);
  }
  const uint32_t cap = std::min(limits.max_invocations, kTargetInvocations);
  if (cap == 0) {
    return invalid_argument(
        "Attention (vulkan): device reports 0 invocations per workgroup");
  }
  AttentionTiling t;
  const uint64_t widest = std::max(sizes.head_dim, sizes.value_dim);
  t.splits = 1;
  while (div_up(widest, t.splits) > kRegisterStateFloats &&
         t.splits * 2 <= cap) {
    t.splits *= 2;
  }
  t.query_per_invocation = div_up(sizes.head_dim, t.splits);
  t.values_per_invocation = div_up(sizes.value_dim, t.splits);
  const uint32_t sg = limits.subgroup_size;
  const bool can_shuffle = limits.subgroup_arithmetic && sg > 0 &&
                           t.splits <= sg && sg % t.splits == 0;
  const uint32_t max_tile = std::min<uint32_t>(
      kMaxTile, pow2_at_least(std::max<int64_t>(sizes.total_len, 1)));
  // Prefer tiles of >= 16 keys (or all keys); shrink the rows for them.
  const uint32_t good_tile = std::min(16u, max_tile);
  AttentionTiling best;
  for (int pass = 0; pass < 2 && best.tile == 0; ++pass) {
    for (uint32_t rows = std::min(cap / t.splits, pow2_at_least(sizes.rows));
         rows >= 1 && best.tile == 0; rows /= 2) {
      for (bool shuffle : {true, false}) {
        AttentionTiling c = t;
        c.rows = rows;
        c.invocations = rows * c.splits;
        c.subgroup = shuffle && can_shuffle && c.invocations % sg == 0;
        if (shuffle != c.subgroup) continue;
        const uint32_t tile = fit_tile(c, max_tile, limits.shared_memory_bytes);
        if (tile >= (pass == 0 ? good_tile : 1u)) {
          best = c;
          break;
        }
      }
    }
  }
  if (best.tile == 0) {
    t.rows = 1;
    t.invocations = t.splits;
    t.tile = 1;
    return unsupported(
        "Attention (vulkan): d = {}, dv = {} need at least {} B of shared "
        "memory per workgroup, the device allows {} B",
        sizes.head_dim, sizes.value_dim, attention_shared_bytes(t),
        limits.shared_memory_bytes);
  }
  t = best;
  // Loops per key tile whose trip count is not a small constant (tiling.h,
  // kMaxLoopIterations): staging K and V, the keys, summing partials, the
  // softmax's max and accumulation.
  auto loop = [](uint64_t trips) { return trips > 16 ? trips : 0; };
  const uint64_t per_tile =
      1 +
      div_up(uint64_t{t.tile} * t.splits * t.query_per_invocation,
             t.invocations) +
      div_up(uint64_t{t.tile} * t.splits * t.values_per_invocation,
             t.invocations) +
      t.tile * (1 + loop(t.query_per_invocation)) +
      (t.subgroup ? 0
                  : div_up(uint64_t{t.rows} * t.tile, t.invocations) *
                        (1 + loop(t.splits))) +
      t.tile * (2 + loop(t.values_per_invocation));
  const uint32_t longest_run = segment_tokens(
      per_tile, t.tile, t.query_per_invocation + t.values_per_invocation + 16);
  const int64_t keys = std::max<int64_t>(sizes.total_len, 1);
  t.keys_per_split =
      static_cast<uint32_t>(std::min<int64_t>(keys, longest_run));
  if (sizes.query_len == 1 && sizes.total_len >= kSplitMinKeys) {
    const uint32_t run = std::max(2 * t.tile, div_up(keys, kMaxKeySplits));
    t.keys_per_split = std::min(t.keys_per_split, div_up(run, t.tile) * t.tile);
  }
  t.key_splits = div_up(keys, t.keys_per_split);
  const uint64_t partial_bytes = uint64_t{4} * sizes.groups * sizes.rows *
                                 t.key_splits * (sizes.value_dim + 2);
  if (t.key_splits > 1 && limits.max_storage_buffer_range != 0 &&
      partial_bytes > limits.max_storage_buffer_range) {
    return unsupported(
        "Attention (vulkan): {} keys need {} split-K runs whose partial "
        "results ({} B) pass the device's maxStorageBufferRange ({} B)",
        sizes.total_len, t.key_splits, partial_bytes,
        limits.max_storage_buffer_range);
  }
  KernelTiling out;
  out.state_place = "registers";
  out.summary = fmt::format(
      "{} query rows per workgroup ({} invocations, {} per row: {} query "
      "values and {} accumulators each), key tile {}, {} reduction{}",
      t.rows, t.invocations, t.splits, t.query_per_invocation,
      t.values_per_invocation, t.tile,
      t.subgroup ? "subgroup" : "shared-memory",
      t.key_splits > 1 ? fmt::format(", split-K {} x {} keys", t.key_splits,
                                     t.keys_per_split)
                       : "");
  out.shared_bytes = attention_shared_bytes(t);
  out.shared_limit = limits.shared_memory_bytes;
  out.constants = {t.invocations,
                   t.rows,
                   t.splits,
                   t.query_per_invocation,
                   t.values_per_invocation,
                   t.tile,
                   t.subgroup ? 1u : 0u,
                   t.key_splits,
                   t.keys_per_split};
  return out;
}

Result<AttentionTiling> attention_tiling_from(const KernelTiling& tiling) {
  const std::vector<uint32_t>& c = tiling.constants;
  if (c.size() != 9 || c[0] != c[1] * c[2] || c[0] == 0 || c[3] == 0 ||
      c[4] == 0 || c[5] == 0 || c[7] == 0 || c[8] == 0) {
    return internal_error(
        "Attention (vulkan): tiling constants are not an attention tiling "
        "({} numbers)",
        c.size());
  }
  return AttentionTiling{c[0], c[1],      c[2], c[3], c[4],
                         c[5], c[6] != 0, c[7], c[8]};
}

}  // namespace seqrt::vulkan
