#include "backends/cuda/device_memory.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backends/cuda/cuda_status.h"

namespace seqrt::cuda {
namespace {

// -1: no fault; otherwise the number of allocations that still succeed.
int64_t fault_budget_from_env() {
  const char* env = std::getenv("SEQRT_CUDA_FAULT");
  if (env == nullptr) return -1;
  std::string spec = env;
  if (spec == "oom") return 0;
  const std::string prefix = "oom_after=";
  if (spec.rfind(prefix, 0) == 0) {
    return std::strtoll(spec.c_str() + prefix.size(), nullptr, 10);
  }
  return -1;
}

bool injected_failure() {
  static const bool enabled = fault_budget_from_env() >= 0;
  static std::atomic<int64_t> budget{fault_budget_from_env()};
  return enabled && budget.fetch_sub(1) <= 0;
}

}  // namespace

Result<void*> device_malloc(size_t bytes, const char* what) {
  std::string label = fmt::format("cudaMalloc of {} bytes for {}", bytes, what);
  if (injected_failure()) {
    return cuda_status(cudaErrorMemoryAllocation, label + " (injected)");
  }
  void* data = nullptr;
  cudaError_t error = cudaMalloc(&data, bytes == 0 ? 1 : bytes);
  if (error != cudaSuccess) {
    // Clear the sticky-free error so later calls are not poisoned.
    cudaGetLastError();
    return cuda_status(error, label);
  }
  return data;
}

void device_free(void* data) {
  if (data != nullptr) cudaFree(data);
}

DeviceArena::~DeviceArena() { device_free(base_); }

Status DeviceArena::reserve(size_t bytes) {
  if (bytes <= capacity_) return Status::ok();
  // Kernels of earlier nodes may still read the old block.
  SEQRT_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize(), "arena growth");
  device_free(base_);
  base_ = nullptr;
  capacity_ = 0;
  SEQRT_ASSIGN_OR_RETURN(void* data, device_malloc(bytes, "the node arena"));
  base_ = static_cast<char*>(data);
  capacity_ = bytes;
  used_ = 0;
  return Status::ok();
}

void* DeviceArena::take(size_t bytes) {
  size_t size = aligned(bytes);
  if (used_ + size > capacity_) return nullptr;
  void* block = base_ + used_;
  used_ += size;
  return block;
}

PinnedStaging::~PinnedStaging() {
  if (data_ != nullptr) cudaFreeHost(data_);
}

Result<void*> PinnedStaging::reserve(size_t bytes) {
  if (bytes <= capacity_) return data_;
  if (data_ != nullptr) cudaFreeHost(data_);
  data_ = nullptr;
  capacity_ = 0;
  SEQRT_CUDA_RETURN_IF_ERROR(
      cudaMallocHost(&data_, bytes),
      fmt::format("cudaMallocHost of {} bytes for staging", bytes));
  capacity_ = bytes;
  return data_;
}

}  // namespace seqrt::cuda
