#include <cfloat>

#include "backends/cuda/kernels/rows.h"

namespace seqrt::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

enum class Reduce { kSum, kMax };

// Every thread of the block gets the reduction of `value` over the block.
__device__ float block_reduce(float value, Reduce kind) {
  __shared__ float partial[kWarps];
  __shared__ float total;
  for (int offset = 16; offset > 0; offset /= 2) {
    float other = __shfl_xor_sync(0xffffffffu, value, offset);
    value = kind == Reduce::kSum ? value + other : fmaxf(value, other);
  }
  int warp = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) partial[warp] = value;
  __syncthreads();
  if (threadIdx.x == 0) {
    float result = partial[0];
    for (int w = 1; w < kWarps; ++w) {
      result = kind == Reduce::kSum ? result + partial[w]
                                    : fmaxf(result, partial[w]);
    }
    total = result;
  }
  __syncthreads();
  float result = total;
  // `partial` and `total` are reused by the next call.
  __syncthreads();
  return result;
}

__global__ void softmax_kernel(const float* x, float* y, int64_t cols,
                               bool log_softmax) {
  const float* in = x + blockIdx.x * cols;
  float* out = y + blockIdx.x * cols;
  float max_value = -FLT_MAX;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    max_value = fmaxf(max_value, in[c]);
  }
  max_value = block_reduce(max_value, Reduce::kMax);
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    sum += expf(in[c] - max_value);
  }
  sum = block_reduce(sum, Reduce::kSum);
  float log_sum = logf(sum);
  float inverse = 1.0f / sum;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    float shifted = in[c] - max_value;
    out[c] = log_softmax ? shifted - log_sum : expf(shifted) * inverse;
  }
}

// Two passes over the row (mean, then variance of the centred values):
// the one-pass formula loses precision when the mean is large.
__global__ void layer_norm_kernel(const float* x, const float* scale,
                                  const float* bias, float* y, int64_t cols,
                                  float epsilon, int64_t affine_stride) {
  const float* in = x + blockIdx.x * cols;
  float* out = y + blockIdx.x * cols;
  scale += blockIdx.x * affine_stride;
  if (bias != nullptr) bias += blockIdx.x * affine_stride;
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) sum += in[c];
  float mean = block_reduce(sum, Reduce::kSum) / cols;
  float squares = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    float centred = in[c] - mean;
    squares += centred * centred;
  }
  float inv_std = rsqrtf(block_reduce(squares, Reduce::kSum) / cols + epsilon);
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    float value = (in[c] - mean) * inv_std * scale[c];
    out[c] = bias != nullptr ? value + bias[c] : value;
  }
}

__global__ void rms_norm_kernel(const float* x, const float* scale, float* y,
                                int64_t cols, float epsilon,
                                int64_t affine_stride) {
  const float* in = x + blockIdx.x * cols;
  float* out = y + blockIdx.x * cols;
  scale += blockIdx.x * affine_stride;
  float squares = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads)
    squares += in[c] * in[c];
  float inv_rms = rsqrtf(block_reduce(squares, Reduce::kSum) / cols + epsilon);
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    out[c] = in[c] * inv_rms * scale[c];
  }
}

// Rows beyond the grid's x limit are not expected: 2^31 - 1 rows.
bool grid_fits(int64_t rows) { return rows <= 0x7fffffff; }

}  // namespace

cudaError_t launch_softmax_rows(const float* x, float* y, int64_t rows,
                                int64_t cols, bool log_softmax,
                                cudaStream_t stream) {
  if (rows == 0 || cols == 0) return cudaSuccess;
  if (!grid_fits(rows)) return cudaErrorInvalidConfiguration;
  softmax_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      x, y, cols, log_softmax);
  return cudaGetLastError();
}

cudaError_t launch_layer_norm_rows(const float* x, const float* scale,
                                   const float* bias, float* y, int64_t rows,
                                   int64_t cols, float epsilon,
                                   cudaStream_t stream, int64_t affine_stride) {
  if (rows == 0 || cols == 0) return cudaSuccess;
  if (!grid_fits(rows)) return cudaErrorInvalidConfiguration;
  layer_norm_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      x, scale, bias, y, cols, epsilon, affine_stride);
  return cudaGetLastError();
}

cudaError_t launch_rms_norm_rows(const float* x, const float* scale, float* y,
                                 int64_t rows, int64_t cols, float epsilon,
                                 cudaStream_t stream, int64_t affine_stride) {
  if (rows == 0 || cols == 0) return cudaSuccess;
  if (!grid_fits(rows)) return cudaErrorInvalidConfiguration;
  rms_norm_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      x, scale, y, cols, epsilon, affine_stride);
  return cudaGetLastError();
}

}  // namespace seqrt::cuda
