// Tiling choices for SelectiveScan, recurrent Retention and
// CausalConvWithState (tiling.h).
#include "backends/vulkan/tiling.h"

#include <fmt/format.h>

#include <algorithm>

namespace seqrt::vulkan {
namespace {

constexpr uint32_t kFloat = 4;

uint32_t round_up_pow2(uint64_t n) {
  uint32_t p = 1;
  while (p < n && p < (1u << 30)) p <<= 1;
  return p;
}

uint32_t ceil_div(uint64_t a, uint64_t b) {
  return static_cast<uint32_t>((a + b - 1) / b);
}

// Invocations one workgroup may use: the device's limit, at most our aim.
uint32_t workgroup_cap(const DeviceLimits& limits) {
  return std::min(limits.max_invocations, kTargetInvocations);
}

std::string kib(uint32_t bytes) {
  return bytes % 1024 == 0 ? fmt::format("{} KiB", bytes / 1024)
                           : fmt::format("{} B", bytes);
}

// Splits of a channel's N states over invocations: the fewest that keep
// each invocation's share within the register budget.
uint32_t scan_splits(uint32_t states, uint32_t cap) {
  uint32_t splits = 1;
  while (ceil_div(states, splits) > kRegisterStateFloats && splits * 2 <= cap) {
    splits *= 2;
  }
  return splits;
}

// The largest divisor of `n` that is at most `cap` (>= 1).
uint32_t largest_divisor(uint64_t n, uint32_t cap) {
  for (uint32_t c = std::min<uint64_t>(cap, n); c > 1; --c) {
    if (n % c == 0) return c;
  }
  return 1;
}

// Fills channels and tile for fixed splits: the most channels, then the
// longest tile, that fit `limit`; false when not even one of each fits.
bool fit_scan(ScanTiling& t, const ScanSizes& sizes, uint32_t cap,
              uint32_t limit, uint32_t subgroup_size) {
  const uint32_t max_tile =
      std::min<uint32_t>(32, round_up_pow2(std::max<int64_t>(sizes.length, 1)));
  for (uint32_t ch = largest_divisor(sizes.channels_per_group, cap / t.splits);
       ch >= 1; ch = largest_divisor(sizes.channels_per_group, ch - 1)) {
    t.channels = ch;
    t.invocations = ch * t.splits;
    const bool whole_subgroups =
        subgroup_size > 0 && t.invocations % subgroup_size == 0;
    if (t.subgroup && !whole_subgroups) {
      if (ch == 1) break;
      continue;
    }
    for (uint32_t tile = max_tile; tile >= 1; tile /= 2) {
      t.tile = tile;
      if (scan_shared_bytes(t) <= limit) return true;
    }
    if (ch == 1) break;
  }
  return false;
}

// The scan-shaped plan of SelectiveScan and recurrent Retention: `op` and
// `columns` name the op and what a workgroup's columns are in messages.
Result<KernelTiling> plan_state_columns(const char* op, const char* columns,
                                        const ScanSizes& sizes,
                                        const DeviceLimits& limits);

}  // namespace

uint32_t segment_tokens(uint64_t per_tile, uint32_t tile, uint64_t fixed) {
  const uint64_t budget =
      kMaxLoopIterations > fixed ? kMaxLoopIterations - fixed : 0;
  const uint64_t tiles =
      std::max<uint64_t>(budget / std::max<uint64_t>(per_tile, 1), 1);
  return static_cast<uint32_t>(std::min<uint64_t>(tiles * tile, 1u << 30));
}

std::vector<uint32_t> scan_constants(const ScanTiling& t) {
  return {t.invocations,           t.channels, t.splits,
          t.states_per_invocation, t.tile,     t.state_shared ? 1u : 0u,
          t.subgroup ? 1u : 0u};
}

uint32_t scan_shared_bytes(const ScanTiling& t) {
  const uint32_t padded = t.splits * t.states_per_invocation;
  const uint32_t tiles = 2 * padded * t.tile;  // B and C rows
  const uint32_t partial = t.subgroup ? 1 : t.invocations * t.tile;
  const uint32_t state = t.state_shared ? 2 * t.channels * padded : 2;  // h, A
  return kFloat * (tiles + partial + state);
}

Result<KernelTiling> plan_selective_scan(const ScanSizes& sizes,
                                         const DeviceLimits& limits) {
  return plan_state_columns("SelectiveScan", "channels", sizes, limits);
}

Result<KernelTiling> plan_retention(int64_t dk, int64_t dv, int64_t length,
                                    const DeviceLimits& limits) {
  return plan_state_columns("Retention", "value columns", {dv, dk, length},
                            limits);
}

Result<KernelTiling> plan_ssd(int64_t head_dim, int64_t states, int64_t length,
                              const DeviceLimits& limits) {
  return plan_state_columns("SSD", "head columns", {head_dim, states, length},
                            limits);
}

namespace {

Result<KernelTiling> plan_state_columns(const char* op, const char* columns,
                                        const ScanSizes& sizes,
                                        const DeviceLimits& limits) {
  if (sizes.states <= 0 || sizes.channels_per_group <= 0) {
    return invalid_argument(
        "{} (vulkan): needs at least one state row and one {}, got {} and {}",
        op, columns, sizes.states, sizes.channels_per_group);
  }
  const uint32_t cap = workgroup_cap(limits);
  if (cap == 0) {
    return invalid_argument(
        "{} (vulkan): device reports 0 invocations per workgroup", op);
  }
  const uint32_t states = static_cast<uint32_t>(sizes.states);
  ScanTiling t;
  t.splits = scan_splits(states, cap);
  t.states_per_invocation = ceil_div(states, t.splits);
  t.state_shared = t.states_per_invocation > kRegisterStateFloats;
  // Shuffles need a channel's invocations inside one subgroup.
  const uint32_t sg = limits.subgroup_size;
  t.subgroup = limits.subgroup_arithmetic && sg > 0 && t.splits <= sg &&
               sg % t.splits == 0;
  bool fits = fit_scan(t, sizes, cap, limits.shared_memory_bytes, sg);
  if (!fits && t.subgroup) {
    t.subgroup = false;
    fits = fit_scan(t, sizes, cap, limits.shared_memory_bytes, sg);
  }
  if (!fits) {
    t.channels = 1;
    t.invocations = t.splits;
    t.tile = 1;
    return unsupported(
        "{} (vulkan): {} state rows need at least {} of shared memory "
        "per workgroup, the device allows {}",
        op, sizes.states, kib(scan_shared_bytes(t)),
        kib(limits.shared_memory_bytes));
  }
  // Loops of the scan-shaped shaders per token tile, counting the loops
  // whose trip count is not a small constant (those the compiler unrolls):
  // staging the tile, the tokens, summing the partials.
  auto loop = [](uint64_t trips) { return trips > 16 ? trips : 0; };
  const uint64_t per_tile =
      1 +
      ceil_div(uint64_t{t.splits} * t.states_per_invocation * t.tile,
               t.invocations) +
      t.tile * (1 + loop(t.states_per_invocation)) +
      (t.subgroup ? 0
                  : ceil_div(uint64_t{t.channels} * t.tile, t.invocations) *
                        (1 + loop(t.splits)));
  t.segment =
      segment_tokens(per_tile, t.tile, 2 * t.states_per_invocation + 16);
  KernelTiling out;
  out.state_place = t.state_shared ? "shared memory" : "registers";
  out.summary = fmt::format(
      "{} {} x {} states per workgroup ({} invocations, {} states "
      "each), token tile {}, {} reduction{}",
      t.channels, columns, states, t.invocations, t.states_per_invocation,
      t.tile, t.subgroup ? "subgroup" : "shared-memory",
      sizes.length > t.segment
          ? fmt::format(", {} tokens per dispatch", t.segment)
          : "");
  out.shared_bytes = scan_shared_bytes(t);
  out.shared_limit = limits.shared_memory_bytes;
  out.constants = scan_constants(t);
  out.constants.push_back(t.segment);
  return out;
}

}  // namespace

Result<ScanTiling> scan_tiling_from(const KernelTiling& tiling) {
  const std::vector<uint32_t>& c = tiling.constants;
  if (c.size() != 8 || c[0] != c[1] * c[2] || c[0] == 0 || c[3] == 0 ||
      c[4] == 0 || c[7] == 0) {
    return internal_error(
        "SelectiveScan (vulkan): tiling constants are not a "
        "scan tiling ({} numbers)",
        c.size());
  }
  return ScanTiling{c[0], c[1], c[2], c[3], c[4], c[5] != 0, c[6] != 0, c[7]};
}

uint32_t conv_shared_bytes(const ConvTiling& t) {
  // The main pass stages tile + k-1 inputs; the state pass k-1 (at least 1).
  return kFloat * std::max(t.tile + t.kernel - 1, std::max(t.kernel - 1, 1u));
}

Result<KernelTiling> plan_causal_conv(int64_t kernel_size, int64_t length,
                                      const DeviceLimits& limits) {
  if (kernel_size <= 0) {
    return invalid_argument(
        "CausalConvWithState (vulkan): kernel size must be >= 1, got {}",
        kernel_size);
  }
  const uint32_t cap = workgroup_cap(limits);
  ConvTiling t;
  t.kernel = static_cast<uint32_t>(std::min<int64_t>(kernel_size, 1 << 24));
  t.invocations = std::max(
      1u, std::min<uint32_t>(cap, round_up_pow2(std::max<int64_t>(length, 1))));
  // Each invocation computes up to 4 tokens of the tile.
  for (uint32_t per = 4; per >= 1; per /= 2) {
    t.tile = t.invocations * per;
    if (conv_shared_bytes(t) <= limits.shared_memory_bytes) break;
  }
  while (conv_shared_bytes(t) > limits.shared_memory_bytes &&
         t.invocations > 1) {
    t.invocations /= 2;
    t.tile = t.invocations;
  }
  if (conv_shared_bytes(t) > limits.shared_memory_bytes) {
    return unsupported(
        "CausalConvWithState (vulkan): kernel size {} needs at least {} of "
        "shared memory per workgroup, the device allows {}",
        kernel_size, kib(conv_shared_bytes(t)),
        kib(limits.shared_memory_bytes));
  }
  KernelTiling out;
  out.state_place = "";
  out.summary = fmt::format(
      "{} tokens of one channel per workgroup ({} "
      "invocations), kernel {} staged in shared memory",
      t.tile, t.invocations, t.kernel);
  out.shared_bytes = conv_shared_bytes(t);
  out.shared_limit = limits.shared_memory_bytes;
  out.constants = {t.invocations, t.tile, t.kernel};
  return out;
}

Result<ConvTiling> conv_tiling_from(const KernelTiling& tiling) {
  const std::vector<uint32_t>& c = tiling.constants;
  if (c.size() != 3 || c[0] == 0 || c[1] == 0 || c[2] == 0) {
    return internal_error(
        "CausalConvWithState (vulkan): tiling constants "
        "are not a conv tiling ({} numbers)",
        c.size());
  }
  return ConvTiling{c[0], c[1], c[2]};
}

}  // namespace seqrt::vulkan
