// ONNX Conv (1-D and 2-D, grouped and depthwise) in fp32 as a direct
// convolution: one thread per output element, the sum of conv_plan.h.
#pragma once

#include <cuda_runtime_api.h>

#include "backends/cuda/conv_plan.h"

namespace seqrt::cuda {

// y = conv(x, w) + bias[m] (bias may be null).
cudaError_t launch_conv(const float* x, const float* w, const float* bias,
                        float* y, const ConvShape& shape, cudaStream_t stream);

}  // namespace seqrt::cuda
