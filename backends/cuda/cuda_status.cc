#include "backends/cuda/cuda_status.h"

#include <fmt/format.h>

namespace seqrt::cuda {

Status cuda_status(cudaError_t error, const std::string& what) {
  const char* name = cudaGetErrorName(error);
  const char* text = cudaGetErrorString(error);
  switch (error) {
    case cudaSuccess:
      return Status::ok();
    case cudaErrorInsufficientDriver:
    case cudaErrorStubLibrary:
      // 35 on a machine without the NVIDIA driver; 34 where only the
      // toolkit's stub libcuda is found.
      return no_device("cuda backend: no CUDA driver ({}: {}, error {})", what,
                       name, static_cast<int>(error));
    case cudaErrorNoDevice:
      return no_device("cuda backend: no CUDA device ({}: {})", what, name);
    case cudaErrorMemoryAllocation:
      return make_error(StatusCode::kOutOfMemory,
                        "cuda backend: out of device memory ({})", what);
    default:
      return make_error(StatusCode::kInternal,
                        "cuda backend: {} failed: {} ({})", what, name, text);
  }
}

}  // namespace seqrt::cuda
