// When a test may skip a backend: only when the backend reports that this
// machine has no device for it (StatusCode::kNoDevice: no Vulkan driver, no
// GPU), and not even then when SEQRT_REQUIRE_BACKENDS names it (CI sets
// "reference,cpu,vulkan", so a Vulkan that stops opening fails there). Any
// other error is a failure, never a skip.
#pragma once

#include <cstdlib>
#include <sstream>
#include <string>

#include "graph/status.h"

namespace seqrt::device_skip {

// True when SEQRT_REQUIRE_BACKENDS (comma-separated names) lists `backend`.
inline bool backend_required(const std::string& backend) {
  const char* list = std::getenv("SEQRT_REQUIRE_BACKENDS");
  if (list == nullptr) return false;
  std::stringstream names(list);
  std::string name;
  while (std::getline(names, name, ',')) {
    if (name == backend) return true;
  }
  return false;
}

// True when `status`, from opening `backend`, allows skipping its tests.
inline bool may_skip_for_no_device(const std::string& backend,
                                   const Status& status) {
  return status.code() == StatusCode::kNoDevice && !backend_required(backend);
}

}  // namespace seqrt::device_skip

// In a gtest test: go on when `status` is ok, skip when the backend has no
// device here (and is not required), fail on anything else.
#define SEQRT_SKIP_IF_NO_DEVICE(backend, status)                              \
  do {                                                                        \
    const ::seqrt::Status seqrt_open_status_ = (status);                      \
    if (!seqrt_open_status_.is_ok()) {                                        \
      if (::seqrt::device_skip::may_skip_for_no_device(backend,               \
                                                       seqrt_open_status_)) { \
        GTEST_SKIP() << seqrt_open_status_.message();                         \
      }                                                                       \
      FAIL() << "on the " << (backend)                                        \
             << " backend: " << seqrt_open_status_.to_string()                \
             << (::seqrt::device_skip::backend_required(backend)              \
                     ? " (SEQRT_REQUIRE_BACKENDS requires it)"                \
                     : "");                                                   \
    }                                                                         \
  } while (0)

// `auto var = create_backend(name)` (runtime/backend_registry.h, which the
// caller includes), then as SEQRT_SKIP_IF_NO_DEVICE.
#define SEQRT_CREATE_BACKEND_OR_SKIP(var, name) \
  auto var = ::seqrt::create_backend(name);     \
  SEQRT_SKIP_IF_NO_DEVICE(name, var.status())
