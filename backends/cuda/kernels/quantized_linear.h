// seqrt::Linear with weight-only quantized W (bits 4 or 8,
// ops/linalg/quantized_linear.h) in fp32: Y = act(X·W_real + B), W kept
// packed on the device and dequantised in registers or shared memory, fp32
// accumulate. Up to kQuantizedGemvMaxRows rows a GEMV (a warp per output
// column), above a 64x64 tiled GEMM.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace seqrt::cuda {

// Rows up to which the GEMV runs.
inline constexpr int64_t kQuantizedGemvMaxRows = 8;

struct QuantizedLinearArgs {
  const float* x = nullptr;             // (m, k)
  const uint8_t* w = nullptr;           // (n, row_bytes), codes of column n
  const float* bias = nullptr;          // (n) or null
  const float* scale = nullptr;         // (n, n_blocks)
  const uint8_t* zero_point = nullptr;  // (n, n_blocks) or null: 2^(bits-1)
  float* y = nullptr;                   // (m, n)
  int64_t m = 0, n = 0, k = 0;
  int bits = 4;
  int64_t block_size = 32, n_blocks = 0, row_bytes = 0;
  // seqrt::Linear's activation: 0 none, 1 relu, 2 gelu (erf), 3 gelu_tanh,
  // 4 sigmoid, 5 silu.
  int activation = 0;
};

cudaError_t launch_quantized_linear(const QuantizedLinearArgs& args,
                                    cudaStream_t stream);

}  // namespace seqrt::cuda
