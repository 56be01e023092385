#include "backends/cuda/kernels/quantized_linear.h"

#include <algorithm>

namespace seqrt::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kGemvWarps = 8;  // output columns per GEMV block
constexpr int kTile = 64;
constexpr int kStep = 16;
constexpr int64_t kMaxBlocks = 65535;

__device__ float activate(float v, int act) {
  switch (act) {
    case 1:
      return fmaxf(v, 0.0f);
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

__device__ uint32_t code_at(const uint8_t* row, int64_t kk, int bits) {
  if (bits == 8) return row[kk];
  const uint32_t byte = row[kk >> 1];
  return (kk & 1) == 0 ? byte & 15u : byte >> 4;
}

__device__ float zero_point_at(const QuantizedLinearArgs& a, int64_t col,
                               int64_t block) {
  if (a.zero_point == nullptr) return static_cast<float>(1 << (a.bits - 1));
  return static_cast<float>(a.zero_point[col * a.n_blocks + block]);
}

// A warp per output column: lane l takes the 4-byte groups l, l + 32, ...
// of the column's codes (8 int4 or 4 int8 codes, never straddling a block:
// blocks are multiples of 16 codes), subtracts the zero point per code,
// scales once per group, and uses them for all m (<= 8) rows; the lanes'
// sums meet by shuffles.
__global__ void quantized_gemv_kernel(QuantizedLinearArgs a) {
  const int lane = threadIdx.x % kWarp;
  const int codes_per_group = 32 / a.bits;
  const int64_t full_groups = a.k / codes_per_group;
  for (int64_t col = int64_t(blockIdx.x) * kGemvWarps + threadIdx.x / kWarp;
       col < a.n; col += int64_t(gridDim.x) * kGemvWarps) {
    const uint8_t* row = a.w + col * a.row_bytes;
    float dot[kQuantizedGemvMaxRows] = {};
    for (int64_t g = lane; g < full_groups; g += kWarp) {
      const int64_t k0 = g * codes_per_group;
      const int64_t block = k0 / a.block_size;
      const float zero = zero_point_at(a, col, block);
      const float s = a.scale[col * a.n_blocks + block];
      const uint32_t word =
          uint32_t(row[g * 4]) | (uint32_t(row[g * 4 + 1]) << 8) |
          (uint32_t(row[g * 4 + 2]) << 16) | (uint32_t(row[g * 4 + 3]) << 24);
      float wv[8];
      for (int j = 0; j < codes_per_group; ++j) {
        wv[j] = float((word >> (j * a.bits)) & ((1u << a.bits) - 1u)) - zero;
      }
      for (int64_t r = 0; r < a.m; ++r) {
        const float* xr = a.x + r * a.k + k0;
        float sum = 0.0f;
        for (int j = 0; j < codes_per_group; ++j) sum += xr[j] * wv[j];
        dot[r] += s * sum;
      }
    }
    // The last k % codes_per_group codes, one per lane.
    const int64_t kk = full_groups * codes_per_group + lane;
    if (kk < a.k) {
      const int64_t block = kk / a.block_size;
      const float wk =
          (float(code_at(row, kk, a.bits)) - zero_point_at(a, col, block)) *
          a.scale[col * a.n_blocks + block];
      for (int64_t r = 0; r < a.m; ++r) dot[r] += a.x[r * a.k + kk] * wk;
    }
    for (int64_t r = 0; r < a.m; ++r) {
      float v = dot[r];
      for (int offset = kWarp / 2; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
      }
      if (lane == 0) {
        if (a.bias != nullptr) v += a.bias[col];
        a.y[r * a.n + col] = activate(v, a.activation);
      }
    }
  }
}

// 64x64 outputs per block, 4x4 per thread of 16x16, K in slices of 16
// whose W part is dequantised into shared memory on the way in.
__global__ void quantized_gemm_kernel(QuantizedLinearArgs a) {
  __shared__ float tile_x[kStep][kTile];
  __shared__ float tile_w[kStep][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int lane = ty * 16 + tx;
  const int64_t row_tiles = (a.m + kTile - 1) / kTile;
  const int64_t col0 = int64_t(blockIdx.x) * kTile;
  const int w_col = lane / 4, quarter = lane % 4;
  const int64_t gc = col0 + w_col;
  for (int64_t rt = blockIdx.y; rt < row_tiles; rt += gridDim.y) {
    const int64_t row0 = rt * kTile;
    float acc[4][4] = {};
    for (int64_t k0 = 0; k0 < a.k; k0 += kStep) {
      for (int l = 0; l < 4; ++l) {
        const int e = lane + l * 256;
        const int kk = e % kStep, r = e / kStep;
        const int64_t gr = row0 + r, gk = k0 + kk;
        tile_x[kk][r] = (gr < a.m && gk < a.k) ? a.x[gr * a.k + gk] : 0.0f;
      }
      const int64_t block = k0 / a.block_size;
      float zero = 0.0f, s = 0.0f;
      if (gc < a.n) {
        zero = zero_point_at(a, gc, block);
        s = a.scale[gc * a.n_blocks + block];
      }
      for (int j = 0; j < 4; ++j) {
        const int kk = quarter * 4 + j;
        const int64_t gk = k0 + kk;
        tile_w[kk][w_col] =
            (gc < a.n && gk < a.k)
                ? (float(code_at(a.w + gc * a.row_bytes, gk, a.bits)) - zero) *
                      s
                : 0.0f;
      }
      __syncthreads();
      for (int kk = 0; kk < kStep; ++kk) {
        float av[4], bv[4];
        for (int i = 0; i < 4; ++i) av[i] = tile_x[kk][ty + 16 * i];
        for (int j = 0; j < 4; ++j) bv[j] = tile_w[kk][tx + 16 * j];
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j) acc[i][j] += av[i] * bv[j];
      }
      __syncthreads();
    }
    for (int i = 0; i < 4; ++i) {
      const int64_t r = row0 + ty + 16 * i;
      if (r >= a.m) continue;
      for (int j = 0; j < 4; ++j) {
        const int64_t col = col0 + tx + 16 * j;
        if (col >= a.n) continue;
        float v = acc[i][j];
        if (a.bias != nullptr) v += a.bias[col];
        a.y[r * a.n + col] = activate(v, a.activation);
      }
    }
  }
}

}  // namespace

cudaError_t launch_quantized_linear(const QuantizedLinearArgs& args,
                                    cudaStream_t stream) {
  if (args.m == 0 || args.n == 0) return cudaSuccess;
  if (args.m <= kQuantizedGemvMaxRows) {
    // Columns beyond the grid are taken by the blocks' stride loop.
    const int64_t blocks =
        std::min<int64_t>((args.n + kGemvWarps - 1) / kGemvWarps, 1 << 30);
    quantized_gemv_kernel<<<static_cast<unsigned>(blocks), kGemvWarps * kWarp,
                            0, stream>>>(args);
  } else {
    // x (column tiles) may reach 2^31 - 1; y (row tiles) loops past 65535.
    const int64_t col_tiles = (args.n + kTile - 1) / kTile;
    const int64_t row_tiles =
        std::min<int64_t>((args.m + kTile - 1) / kTile, kMaxBlocks);
    quantized_gemm_kernel<<<dim3(static_cast<unsigned>(col_tiles),
                                 static_cast<unsigned>(row_tiles)),
                            dim3(16, 16), 0, stream>>>(args);
  }
  return cudaGetLastError();
}

}  // namespace seqrt::cuda
