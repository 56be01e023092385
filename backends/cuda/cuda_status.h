// CUDA runtime errors as seqrt Status values, each one clear line: the
// normal answers of a machine without a driver, without a device, or out
// of device memory are told apart from our own bugs.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "graph/status.h"

namespace seqrt::cuda {

// `what` names the call or the op ("cudaMalloc of 4096 bytes").
Status cuda_status(cudaError_t error, const std::string& what);

}  // namespace seqrt::cuda

// Returns from the enclosing function with a Status when `call` fails.
#define SEQRT_CUDA_RETURN_IF_ERROR(call, what)                    \
  do {                                                            \
    cudaError_t seqrt_cuda_error_ = (call);                       \
    if (seqrt_cuda_error_ != cudaSuccess) {                       \
      return ::seqrt::cuda::cuda_status(seqrt_cuda_error_, what); \
    }                                                             \
  } while (false)
