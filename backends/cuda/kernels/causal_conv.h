// CausalConvWithState (ONNX opset 27) in fp32: a depthwise causal 1-D
// convolution over [past_state, input] per channel, optional SiLU, and the
// last k-1 inputs as the new state. One kernel serves the whole sequence
// and the single step (L = 1).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace seqrt::cuda {

struct CausalConvArgs {
  const float* input = nullptr;       // (B, C, L)
  const float* weight = nullptr;      // (C, 1, k)
  const float* bias = nullptr;        // (C) or null
  const float* past_state = nullptr;  // (B, C, k-1) or null (zeros)
  float* output = nullptr;            // (B, C, L)
  // (B, C, k-1) or null; may be the same buffer as past_state: the
  // outputs are computed first, then each row's state is moved in place.
  float* present_state = nullptr;
  int64_t batch = 0, channels = 0, length = 0, kernel = 1;
  bool silu = false;
};

cudaError_t launch_causal_conv(const CausalConvArgs& args, cudaStream_t stream);

}  // namespace seqrt::cuda
