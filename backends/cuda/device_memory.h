// Device memory of the CUDA plugin: raw allocations (with the fault
// injection tests use to provoke out-of-memory), a per-context arena the
// kernels of one node take their buffers from, and pinned host staging for
// copies. Kernels never allocate; the executor hands them arena blocks.
#pragma once

#include <cstddef>
#include <cstdint>

#include "graph/status.h"

namespace seqrt::cuda {

// cudaMalloc, except that $SEQRT_CUDA_FAULT can make it fail for tests:
// "oom" fails every allocation, "oom_after=N" the ones after the first N.
Result<void*> device_malloc(size_t bytes, const char* what);
void device_free(void* data);

// A bump allocator over one device block, grown (never shrunk) when a
// node needs more than it holds; reset after each node.
class DeviceArena {
 public:
  DeviceArena() = default;
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;
  ~DeviceArena();

  // Makes room for `bytes` in total before the first take() of a node.
  Status reserve(size_t bytes);
  // `bytes` from the reserved block, 256-byte aligned (cuBLASLt, vector
  // loads); null if the caller reserved too little (our bug).
  void* take(size_t bytes);
  void reset() { used_ = 0; }
  size_t capacity() const { return capacity_; }

  static size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }

 private:
  char* base_ = nullptr;
  size_t capacity_ = 0;
  size_t used_ = 0;
};

// Page-locked host memory that host<->device copies go through, so they
// run as DMA at full bus speed; grown on demand.
class PinnedStaging {
 public:
  PinnedStaging() = default;
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;
  ~PinnedStaging();

  Result<void*> reserve(size_t bytes);

 private:
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace seqrt::cuda
