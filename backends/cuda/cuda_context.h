// What every kernel of one CUDA backend shares: the device, its stream and
// cuBLASLt handle, the node arena, the pinned staging buffer and the
// device's limits for the kernel-level planner.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>

#include "backends/backend.h"
#include "backends/cuda/device_memory.h"
#include "backends/cuda/tiling.h"

namespace seqrt::cuda {

class CudaContext {
 public:
  // Checks for a driver and a device before any other CUDA call.
  static Result<std::shared_ptr<CudaContext>> create(int device);
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  const DeviceInfo& info() const { return info_; }
  const DeviceLimits& limits() const { return limits_; }
  cudaStream_t stream() const { return stream_; }
  cublasLtHandle_t cublas() const { return cublas_; }
  DeviceArena& arena() { return arena_; }
  PinnedStaging& staging() { return staging_; }
  // One run at a time: the arena and staging buffer are shared.
  std::mutex& mutex() { return mutex_; }
  // Makes this context's device current on the calling thread.
  Status activate() const;

 private:
  CudaContext() = default;

  int device_ = 0;
  DeviceInfo info_;
  DeviceLimits limits_;
  cudaStream_t stream_ = nullptr;
  cublasLtHandle_t cublas_ = nullptr;
  DeviceArena arena_;
  PinnedStaging staging_;
  std::mutex mutex_;
};

}  // namespace seqrt::cuda
