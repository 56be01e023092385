// The CUDA kernels of the weight-only quantized seqrt::Linear
// (kernels/quantized_linear.cu, ops/linalg/quantized_linear.h) as
// host/device code: reading and dequantising codes, a GEMV lane's partial
// sums, the epilogue. Compiled for the host too, so
// quantized_linear_plan_test runs exactly this arithmetic (with the warp's
// shuffle sum and the GEMM's slice order written as loops) against the
// reference kernel without a GPU.
//
// Device design: up to kQuantizedGemvMaxRows rows (decode) a GEMV, a warp
// per output column; W is output-channel major, so lane l reads the
// column's 4-byte groups l, l + 32, ... (8 int4 or 4 int8 codes; a group
// never straddles a block, blocks being multiples of 16 codes), subtracts
// the zero point per code, applies the scale once per group and uses the
// codes for every row; the lanes' sums meet by shuffles. Above that a
// 64x64 tiled GEMM (4x4 outputs per thread of 16x16) with each 16-deep
// slice of W dequantised into shared memory. fp32 accumulate throughout.
#pragma once

#include <cmath>
#include <cstdint>

#include "backends/cuda/copy_plan.h"

namespace seqrt::cuda {

inline constexpr int64_t kQuantizedGemvMaxRows = 8;
inline constexpr int kQuantizedWarp = 32;

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

SEQRT_HOST_DEVICE inline float quantized_activate(float v, int act) {
  switch (act) {
    case 1:
      return v > 0.0f ? v : 0.0f;
    case 2:
      return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    case 3:
      return 0.5f * v *
             (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
    case 4:
      return 1.0f / (1.0f + expf(-v));
    case 5:
      return v / (1.0f + expf(-v));
    default:
      return v;
  }
}

// Code `kk` of column `col` (bits 4: the low nibble when kk is even).
SEQRT_HOST_DEVICE inline uint32_t quantized_code(const QuantizedLinearArgs& a,
                                                 int64_t col, int64_t kk) {
  const uint8_t* row = a.w + col * a.row_bytes;
  if (a.bits == 8) return row[kk];
  const uint32_t byte = row[kk >> 1];
  return (kk & 1) == 0 ? byte & 15u : byte >> 4;
}

SEQRT_HOST_DEVICE inline float quantized_zero_point(
    const QuantizedLinearArgs& a, int64_t col, int64_t block) {
  if (a.zero_point == nullptr) return static_cast<float>(1 << (a.bits - 1));
  return static_cast<float>(a.zero_point[col * a.n_blocks + block]);
}

// W_real[kk, col].
SEQRT_HOST_DEVICE inline float quantized_weight(const QuantizedLinearArgs& a,
                                                int64_t col, int64_t kk) {
  const int64_t block = kk / a.block_size;
  return (static_cast<float>(quantized_code(a, col, kk)) -
          quantized_zero_point(a, col, block)) *
         a.scale[col * a.n_blocks + block];
}

// Lane `lane`'s partial dot products of column `col` with each of the m
// rows of X (dot[0..m)): its 4-byte groups, then one code of the tail.
SEQRT_HOST_DEVICE inline void quantized_lane_sums(const QuantizedLinearArgs& a,
                                                  int64_t col, int lane,
                                                  float* dot) {
  const int per_group = 32 / a.bits;
  const uint32_t mask = (1u << a.bits) - 1u;
  const int64_t full_groups = a.k / per_group;
  const uint8_t* row = a.w + col * a.row_bytes;
  for (int64_t r = 0; r < a.m; ++r) dot[r] = 0.0f;
  for (int64_t g = lane; g < full_groups; g += kQuantizedWarp) {
    const int64_t k0 = g * per_group;
    const int64_t block = k0 / a.block_size;
    const float zero = quantized_zero_point(a, col, block);
    const float s = a.scale[col * a.n_blocks + block];
    const uint32_t word =
        uint32_t(row[g * 4]) | (uint32_t(row[g * 4 + 1]) << 8) |
        (uint32_t(row[g * 4 + 2]) << 16) | (uint32_t(row[g * 4 + 3]) << 24);
    float wv[8];
    for (int j = 0; j < per_group; ++j) {
      wv[j] = static_cast<float>((word >> (j * a.bits)) & mask) - zero;
    }
    for (int64_t r = 0; r < a.m; ++r) {
      const float* xr = a.x + r * a.k + k0;
      float sum = 0.0f;
      for (int j = 0; j < per_group; ++j) sum += xr[j] * wv[j];
      dot[r] += s * sum;
    }
  }
  const int64_t kk = full_groups * per_group + lane;
  if (kk < a.k) {
    const float wk = quantized_weight(a, col, kk);
    for (int64_t r = 0; r < a.m; ++r) dot[r] += a.x[r * a.k + kk] * wk;
  }
}

// Output (r, col) from its dot product: bias, then the activation.
SEQRT_HOST_DEVICE inline void quantized_store(const QuantizedLinearArgs& a,
                                              int64_t r, int64_t col,
                                              float dot) {
  if (a.bias != nullptr) dot += a.bias[col];
  a.y[r * a.n + col] = quantized_activate(dot, a.activation);
}

}  // namespace seqrt::cuda
