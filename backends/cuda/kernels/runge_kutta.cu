#include "backends/cuda/kernels/runge_kutta.h"

namespace seqrt::cuda {
namespace {

__global__ void rk_stage_kernel(const float* y, const float* f, float a,
                                float* next, const float* acc_in, float b,
                                float* acc, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const float fi = f[i];
    if (next != nullptr) next[i] = y[i] + a * fi;
    acc[i] = acc_in[i] + b * fi;
  }
}

// One warp per row: the gate's logit by a warp-wide sum, then the mix.
__global__ void rk_gated_kernel(const float* y, const float* f1,
                                const float* f2, const float* weight,
                                const float* bias, float* out, int64_t rows,
                                int64_t width) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x / 32);
  for (int64_t r = blockIdx.x * int64_t(blockDim.x / 32) + threadIdx.x / 32;
       r < rows; r += warps) {
    const int64_t base = r * width;
    float logit = 0.0f;
    for (int64_t j = lane; j < width; j += 32) {
      logit += f1[base + j] * weight[j] + f2[base + j] * weight[width + j];
    }
    for (int offset = 16; offset > 0; offset /= 2) {
      logit += __shfl_xor_sync(0xffffffffu, logit, offset);
    }
    logit += bias[0];
    // σ without overflow for large |logit|.
    const float e = expf(-fabsf(logit));
    const float g = logit >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
    for (int64_t j = lane; j < width; j += 32) {
      const int64_t i = base + j;
      out[i] = y[i] + g * f1[i] + (1.0f - g) * f2[i];
    }
  }
}

unsigned blocks_for(int64_t work, int per_block) {
  const int64_t blocks = (work + per_block - 1) / per_block;
  return static_cast<unsigned>(blocks < 65535 ? blocks : 65535);
}

}  // namespace

cudaError_t launch_rk_stage(const float* y, const float* f, float a,
                            float* next, const float* acc_in, float b,
                            float* acc, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  rk_stage_kernel<<<blocks_for(n, 256), 256, 0, stream>>>(y, f, a, next, acc_in,
                                                          b, acc, n);
  return cudaGetLastError();
}

cudaError_t launch_rk_gated(const float* y, const float* f1, const float* f2,
                            const float* weight, const float* bias, float* out,
                            int64_t rows, int64_t width, cudaStream_t stream) {
  if (rows == 0 || width == 0) return cudaSuccess;
  // 8 rows (warps) per block.
  rk_gated_kernel<<<blocks_for(rows, 8), 256, 0, stream>>>(
      y, f1, f2, weight, bias, out, rows, width);
  return cudaGetLastError();
}

}  // namespace seqrt::cuda
