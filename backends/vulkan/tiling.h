// The kernel-level planner for the sequence ops (DESIGN.md §5.2): from the
// device's limits and a node's sizes it chooses the slice each workgroup
// owns, the token tile or chunk length, and where the running state lives
// (registers when it fits the per-invocation budget, else shared memory).
// Pure host code: it needs no device, so its tests run everywhere.
#pragma once

#include <cstdint>

#include "backends/vulkan/kernel.h"

namespace seqrt::vulkan {

// Floats of running state one invocation may keep in registers. Past this
// the compiler spills to device-local scratch on most GPUs, which would
// break the rule that state stays on chip, so the planner moves the state
// to shared memory instead.
constexpr uint32_t kRegisterStateFloats = 16;
// Invocations the planner aims at per workgroup (it uses fewer when the
// device allows fewer or the slice is smaller).
constexpr uint32_t kTargetInvocations = 128;

// SelectiveScan: workgroups own `channels` channels (of one group) of one
// batch row; each channel's N states are split over `splits` invocations.
struct ScanTiling {
  uint32_t invocations = 0;  // workgroup size = channels * splits
  uint32_t channels = 0;     // channels per workgroup
  uint32_t splits = 0;       // invocations per channel
  uint32_t states_per_invocation = 0;
  uint32_t tile = 0;          // tokens per B/C tile in shared memory
  bool state_shared = false;  // running state in shared memory
  bool subgroup = false;      // reduce over splits with shuffles
};
struct ScanSizes {
  int64_t channels_per_group = 0;  // D / G
  int64_t states = 0;              // N
  int64_t length = 0;              // L
};
// Shared memory the scan shader declares for `t` (its arrays, exactly).
uint32_t scan_shared_bytes(const ScanTiling& t);
Result<KernelTiling> plan_selective_scan(const ScanSizes& sizes,
                                         const DeviceLimits& limits);
// Recurrent Retention has the scan's shape: value columns for channels,
// the dk key rows of the state for states, one decay per head.
Result<KernelTiling> plan_retention(int64_t dk, int64_t dv, int64_t length,
                                    const DeviceLimits& limits);
// The tiling back from KernelTiling::constants (written by the planner).
Result<ScanTiling> scan_tiling_from(const KernelTiling& tiling);

// CausalConvWithState: workgroups own `tile` tokens of one channel row and
// stage them with the k-1 tokens before them in shared memory.
struct ConvTiling {
  uint32_t invocations = 0;
  uint32_t tile = 0;  // tokens per workgroup
  uint32_t kernel = 0;
};
uint32_t conv_shared_bytes(const ConvTiling& t);
Result<KernelTiling> plan_causal_conv(int64_t kernel_size, int64_t length,
                                      const DeviceLimits& limits);
Result<ConvTiling> conv_tiling_from(const KernelTiling& tiling);

}  // namespace seqrt::vulkan
