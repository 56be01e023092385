#include "backends/cuda/kernels/quantized_linear.h"

#include <algorithm>

namespace seqrt::cuda {
namespace {

constexpr int kGemvWarps = 8;  // output columns per GEMV block
constexpr int kTile = 64;
constexpr int kStep = 16;
constexpr int64_t kMaxGridY = 65535;

// A warp per output column (quantized_linear_plan.h); columns past the grid
// are taken by the stride loop.
__global__ void quantized_gemv_kernel(QuantizedLinearArgs a) {
  const int lane = threadIdx.x % kQuantizedWarp;
  for (int64_t col =
           int64_t(blockIdx.x) * kGemvWarps + threadIdx.x / kQuantizedWarp;
       col < a.n; col += int64_t(gridDim.x) * kGemvWarps) {
    float dot[kQuantizedGemvMaxRows];
    quantized_lane_sums(a, col, lane, dot);
    for (int64_t r = 0; r < a.m; ++r) {
      float v = dot[r];
      for (int offset = kQuantizedWarp / 2; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
      }
      if (lane == 0) quantized_store(a, r, col, v);
    }
  }
}

// 64x64 outputs per block, 4x4 per thread of 16x16, K in slices of 16
// whose W part is dequantised into shared memory on the way in; row tiles
// past the grid's y are taken by the stride loop.
__global__ void quantized_gemm_kernel(QuantizedLinearArgs a) {
  __shared__ float tile_x[kStep][kTile];
  __shared__ float tile_w[kStep][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int lane = ty * 16 + tx;
  const int64_t row_tiles = (a.m + kTile - 1) / kTile;
  const int64_t col0 = int64_t(blockIdx.x) * kTile;
  // Thread `lane` dequantises 4 codes of one column per slice.
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
      for (int j = 0; j < 4; ++j) {
        const int kk = quarter * 4 + j;
        const int64_t gk = k0 + kk;
        tile_w[kk][w_col] =
            (gc < a.n && gk < a.k) ? quantized_weight(a, gc, gk) : 0.0f;
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
        if (col < a.n) quantized_store(a, r, col, acc[i][j]);
      }
    }
  }
}

}  // namespace

cudaError_t launch_quantized_linear(const QuantizedLinearArgs& args,
                                    cudaStream_t stream) {
  if (args.m == 0 || args.n == 0) return cudaSuccess;
  if (args.m <= kQuantizedGemvMaxRows) {
    const int64_t blocks =
        std::min<int64_t>((args.n + kGemvWarps - 1) / kGemvWarps, 1 << 30);
    quantized_gemv_kernel<<<static_cast<unsigned>(blocks),
                            kGemvWarps * kQuantizedWarp, 0, stream>>>(args);
  } else {
    // x (column tiles) may reach 2^31 - 1; y (row tiles) loops past 65535.
    const int64_t col_tiles = (args.n + kTile - 1) / kTile;
    const int64_t row_tiles =
        std::min<int64_t>((args.m + kTile - 1) / kTile, kMaxGridY);
    quantized_gemm_kernel<<<dim3(static_cast<unsigned>(col_tiles),
                                 static_cast<unsigned>(row_tiles)),
                            dim3(16, 16), 0, stream>>>(args);
  }
  return cudaGetLastError();
}

}  // namespace seqrt::cuda
