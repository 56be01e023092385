// Shared by the Vulkan tests: a backend on lavapipe with the validation
// layers on, or a visible skip where Vulkan is missing.
#pragma once

#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/reference/reference_backend.h"
#include "backends/vulkan/vulkan_backend.h"
#include "tests/device_skip.h"

namespace seqrt::vulkan::testing {

inline void use_lavapipe_with_validation() {
  // Deterministic: the CPU driver only, unless the caller chose a driver.
  setenv("VK_DRIVER_FILES", "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json", 0);
  setenv("SEQRT_VULKAN_VALIDATION", "1", 1);
}

// The backend on lavapipe with validation; the error as `status` (and
// null) when it cannot be opened.
inline std::unique_ptr<Backend> open_backend(Status& status,
                                             VulkanOptions options = {}) {
  use_lavapipe_with_validation();
  Result<std::unique_ptr<Backend>> backend = create_vulkan_backend(options);
  status = backend.status();
  if (!backend.is_ok()) return nullptr;
  return std::move(backend).value();
}

// Compiles `graph` on `backend` and on the reference backend and runs both
// on `inputs`: `want` gets the reference's outputs, `got` the backend's.
inline void run_with_reference(Backend& backend, const Graph& graph,
                               const std::vector<Tensor>& inputs,
                               std::vector<Tensor>& want,
                               std::vector<Tensor>& got) {
  auto compiled = backend.compile(graph, CompileOptions{});
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  auto reference = create_reference_backend()->compile(graph, CompileOptions{});
  ASSERT_TRUE(reference.is_ok()) << reference.status().to_string();
  auto expected = (*reference)->run(inputs);
  auto actual = (*compiled)->run(inputs);
  ASSERT_TRUE(expected.is_ok()) << expected.status().to_string();
  ASSERT_TRUE(actual.is_ok()) << actual.status().to_string();
  want = std::move(expected).value();
  got = std::move(actual).value();
}

// Runs `inputs` through `want` (a reference) and `got` and expects output 0
// of both to agree within atol + rtol * |want|.
inline void expect_first_outputs_close(const Executable& want,
                                       const Executable& got,
                                       const std::vector<Tensor>& inputs,
                                       double atol, double rtol) {
  auto expected = want.run(inputs);
  auto actual = got.run(inputs);
  ASSERT_TRUE(expected.is_ok()) << expected.status().to_string();
  ASSERT_TRUE(actual.is_ok()) << actual.status().to_string();
  const Tensor& w = (*expected)[0];
  const Tensor& y = (*actual)[0];
  ASSERT_EQ(w.dims(), y.dims());
  for (int64_t i = 0; i < w.num_elements(); ++i) {
    double v = w.element_f64(i);
    EXPECT_NEAR(y.element_f64(i), v, atol + rtol * std::abs(v)) << "at " << i;
  }
}

// Every named output of `got` as `want`'s within `tolerance`, where says
// which step of a Stream it was.
inline void expect_close_outputs(const std::map<std::string, Tensor>& got,
                                 const std::map<std::string, Tensor>& want,
                                 const std::string& where,
                                 double tolerance = 2e-4) {
  ASSERT_EQ(got.size(), want.size()) << where;
  for (const auto& [name, tensor] : want) {
    auto it = got.find(name);
    ASSERT_NE(it, got.end()) << where << ": no '" << name << "'";
    ASSERT_EQ(it->second.dims(), tensor.dims()) << where << ": " << name;
    for (int64_t i = 0; i < tensor.num_elements(); ++i) {
      ASSERT_NEAR(it->second.element_f64(i), tensor.element_f64(i), tolerance)
          << where << ": element " << i << " of '" << name << "'";
    }
  }
}

}  // namespace seqrt::vulkan::testing

// Opens the backend as `var`; skips the test, saying why, only when this
// machine has no Vulkan device (tests/device_skip.h), else fails.
#define SEQRT_OPEN_VULKAN_OR_SKIP(var, ...)                                \
  ::seqrt::Status var##_status;                                            \
  std::unique_ptr<::seqrt::Backend> var =                                  \
      ::seqrt::vulkan::testing::open_backend(var##_status, ##__VA_ARGS__); \
  SEQRT_SKIP_IF_NO_DEVICE("vulkan", var##_status)
