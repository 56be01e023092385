// Buffers and copies for backends whose device memory is host memory (the
// reference and CPU backends): they derive from HostMemoryBackend and
// implement only device_info, supports and compile.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backends/backend.h"
#include "graph/alloc_fault.h"

namespace seqrt {

class HostMemoryBackend : public Backend {
 public:
  Result<DeviceBuffer> allocate(size_t bytes) override {
    // 64-byte aligned (cache lines, widest SIMD loads); aligned_alloc wants
    // a multiple of the alignment, and the rounding must not wrap.
    const bool too_large = bytes > SIZE_MAX - 128;
    void* data = too_large || host_allocation_fails()
                     ? nullptr
                     : std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    if (data == nullptr) {
      return make_error(StatusCode::kOutOfMemory,
                        "{} backend: cannot allocate {} bytes",
                        device_info().backend, bytes);
    }
    return DeviceBuffer{data, bytes};
  }

  void release(DeviceBuffer& buffer) override {
    std::free(buffer.data);
    buffer = DeviceBuffer{};
  }

  Status copy_to_device(DeviceBuffer& dst, const void* src,
                        size_t bytes) override {
    if (bytes > dst.bytes) {
      return invalid_argument("copy of {} bytes into a {}-byte buffer", bytes,
                              dst.bytes);
    }
    if (bytes > 0) std::memcpy(dst.data, src, bytes);
    return Status::ok();
  }

  Status copy_to_host(void* dst, const DeviceBuffer& src,
                      size_t bytes) override {
    if (bytes > src.bytes) {
      return invalid_argument("copy of {} bytes from a {}-byte buffer", bytes,
                              src.bytes);
    }
    if (bytes > 0) std::memcpy(dst, src.data, bytes);
    return Status::ok();
  }

  Status synchronize() override { return Status::ok(); }
};

}  // namespace seqrt
