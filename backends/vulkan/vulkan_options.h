// What a Vulkan device is opened with: VulkanOptions, which tests fill in
// directly to force a device, limits or faults, and vulkan_options_from(),
// the user's BackendOptions (backends/backend_options.h) turned into them.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "backends/backend_options.h"
#include "backends/vulkan/kernel.h"

namespace seqrt::vulkan {

// What a test or user may force; unset fields come from the environment
// (SEQRT_VULKAN_*), then from the device.
struct VulkanOptions {
  // Index in vkEnumeratePhysicalDevices order, or -1: SEQRT_VULKAN_DEVICE
  // (an index or a name substring), else the best device.
  int device_index = -1;
  std::string device_name;          // substring of the device name; "" for none
  uint32_t shared_limit_bytes = 0;  // 0: SEQRT_VULKAN_SHARED_LIMIT or device
  bool disable_subgroup_ops = false;  // or SEQRT_VULKAN_NO_SUBGROUP=1
  bool disable_fp16_storage = false;  // as if the device had no 16-bit storage
  bool disable_gemv = false;  // M = 1 on the tiled GEMM; SEQRT_VULKAN_NO_GEMV=1
  // The sequence ops' forms (DeviceLimits::forms); kAuto reads
  // SEQRT_VULKAN_FORMS (recurrent, chunked or auto).
  SequenceForms forms = SequenceForms::kAuto;
  // Store the fp32 weights of MatMul/Gemm/Linear as fp16 (half the memory
  // and bandwidth; fp32 accumulation), or SEQRT_VULKAN_FP16_WEIGHTS=1.
  // Needs 16-bit storage: opening a device without it is then an error.
  bool fp16_weights = false;
  bool validation = false;  // or SEQRT_VULKAN_VALIDATION=1
  // Lower dispatch limits than the device's (0: the device's own, or
  // SEQRT_VULKAN_MAX_GROUPS="x,y,z" and SEQRT_VULKAN_MAX_BINDING=bytes), so
  // tests reach every kernel's spill and refusal paths at small sizes:
  // workgroups per dimension, and bytes one storage binding may span.
  std::array<uint32_t, 3> max_group_count{};
  uint64_t max_binding_bytes = 0;
  // "oom" or "device_lost": the next allocation / submit fails that way
  // (failure-path tests); "" reads SEQRT_VULKAN_INJECT_FAULT.
  std::string inject_fault;
};

// The options a user gave (keys in vulkan_backend_option_specs()), each
// left unset where its environment variable is set so that Device::open()
// reads the variable instead: SEQRT_VULKAN_DEVICE overrides device and
// device_name, SEQRT_VULKAN_FP16_WEIGHTS fp16_weights, SEQRT_VULKAN_FORMS
// forms and SEQRT_VULKAN_VALIDATION validation. kInvalidArgument naming
// the key for an unknown key or a bad value.
Result<VulkanOptions> vulkan_options_from(const BackendOptions& options);

}  // namespace seqrt::vulkan
