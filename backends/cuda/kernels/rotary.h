// RotaryEmbedding (ONNX opset 23) in fp32: rotates channel pairs (i,
// i + r/2), or (2i, 2i + 1) when interleaved, of each head's first r
// channels by the cached angle of the token's position; the other channels
// pass through.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace seqrt::cuda {

struct RotaryArgs {
  const float* x = nullptr;
  const float* cos = nullptr;  // (rows, r/2)
  const float* sin = nullptr;
  // Cache row of token (b, s): positions[b·seq + s] (checked on the host
  // to lie in the caches), or b·seq + s when null.
  const int64_t* positions = nullptr;
  float* y = nullptr;
  int64_t batch = 0, seq = 0, heads = 0, head_size = 0, rotary_dim = 0;
  bool interleaved = false;
  bool heads_first = false;  // X (B, H, S, D), else (B, S, H·D)
};

cudaError_t launch_rotary(const RotaryArgs& args, cudaStream_t stream);

}  // namespace seqrt::cuda
