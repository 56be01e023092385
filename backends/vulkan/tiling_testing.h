// Test support for the kernel-level planner (tiling.h): the limits of a
// desktop-class device with the shared-memory size under test.
#pragma once

#include <cstdint>

#include "backends/vulkan/kernel.h"

namespace seqrt::vulkan {

inline DeviceLimits limits_with(uint32_t shared_kib, bool subgroup = true) {
  DeviceLimits limits;
  limits.shared_memory_bytes = shared_kib * 1024;
  limits.max_invocations = 1024;
  limits.max_group_count = {65535, 65535, 65535};
  limits.subgroup_size = 32;
  limits.subgroup_arithmetic = subgroup;
  limits.max_storage_buffer_range = 1u << 27;
  limits.storage_buffer_offset_alignment = 16;
  return limits;
}

}  // namespace seqrt::vulkan
