// Shared by the Vulkan tests: a backend on lavapipe with the validation
// layers on, or a visible skip where Vulkan is missing.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "backends/vulkan/vulkan_backend.h"

namespace seqrt::vulkan::testing {

inline void use_lavapipe_with_validation() {
  // Deterministic: the CPU driver only, unless the caller chose a driver.
  setenv("VK_DRIVER_FILES", "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json", 0);
  setenv("SEQRT_VULKAN_VALIDATION", "1", 1);
}

// Null (with the reason in `why`) when no Vulkan device can be opened.
inline std::unique_ptr<Backend> open_backend(std::string& why,
                                             VulkanOptions options = {}) {
  use_lavapipe_with_validation();
  Result<std::unique_ptr<Backend>> backend = create_vulkan_backend(options);
  if (!backend.is_ok()) {
    why = backend.status().to_string();
    return nullptr;
  }
  return std::move(backend).value();
}

}  // namespace seqrt::vulkan::testing

// Skips the test, saying why, when Vulkan is absent.
#define SEQRT_OPEN_VULKAN_OR_SKIP(var, ...)                             \
  std::string var##_why;                                                \
  std::unique_ptr<::seqrt::Backend> var =                               \
      ::seqrt::vulkan::testing::open_backend(var##_why, ##__VA_ARGS__); \
  if (var == nullptr) GTEST_SKIP() << "no Vulkan device: " << var##_why
