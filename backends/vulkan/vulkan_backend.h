// The Vulkan backend (DESIGN.md §6; backends/vulkan/README.md).
#pragma once

#include <memory>

#include "backends/backend.h"
#include "backends/vulkan/device.h"

namespace seqrt {

// Opens the device the options (and SEQRT_VULKAN_* variables) choose; an
// error, never an abort, when Vulkan or a usable device is missing.
Result<std::unique_ptr<Backend>> create_vulkan_backend(
    const vulkan::VulkanOptions& options);
// The keys create_vulkan_backend(BackendOptions) takes, each overridden
// by its SEQRT_VULKAN_* variable where that is set (README.md).
const std::vector<BackendOptionSpec>& vulkan_backend_option_specs();
// The registry's form: vulkan_options_from(options), then the above.
Result<std::unique_ptr<Backend>> create_vulkan_backend(
    const BackendOptions& options);

namespace vulkan {
// The device behind a backend made by create_vulkan_backend (tests read
// its validation count and inject faults through it); null for others.
std::shared_ptr<Device> device_of(Backend& backend);
}  // namespace vulkan

}  // namespace seqrt
