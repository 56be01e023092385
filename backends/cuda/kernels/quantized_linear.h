// seqrt::Linear with weight-only quantized W (bits 4 or 8) in fp32: the
// launch. The design and the arithmetic the kernels share with the host
// test: backends/cuda/quantized_linear_plan.h.
#pragma once

#include <cuda_runtime_api.h>

#include "backends/cuda/quantized_linear_plan.h"

namespace seqrt::cuda {

cudaError_t launch_quantized_linear(const QuantizedLinearArgs& args,
                                    cudaStream_t stream);

}  // namespace seqrt::cuda
