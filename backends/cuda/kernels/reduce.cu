#include "backends/cuda/kernels/reduce.h"

namespace seqrt::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = kThreads / 32;

int blocks_for(int64_t n, int64_t per_block) {
  int64_t blocks = (n + per_block - 1) / per_block;
  return static_cast<int>(blocks < 65535 * 32 ? blocks : 65535 * 32);
}

// As the reference: a NaN, once seen, stays.
__device__ double combine(ReduceOp op, double acc, double x) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kMean:
      return acc + x;
    case ReduceOp::kMax:
      return x > acc || isnan(x) ? x : acc;
    case ReduceOp::kMin:
      return x < acc || isnan(x) ? x : acc;
  }
  return acc;
}

// One warp per output element; lanes stride over the reduced elements and
// combine through shuffles.
__global__ void reduce_kernel(ReduceOp op, const float* x, float* y,
                              ReduceIndex index, float empty_value) {
  const int lane = threadIdx.x % 32;
  const int64_t first = blockIdx.x * int64_t(kWarpsPerBlock) + threadIdx.x / 32;
  const int64_t step = int64_t(gridDim.x) * kWarpsPerBlock;
  for (int64_t o = first; o < index.outputs; o += step) {
    if (index.count == 0) {
      if (lane == 0) y[o] = empty_value;
      continue;
    }
    const float* base = x + axes_offset(index.kept, o);
    // Lanes without an element start from element 0, which every
    // reduction may see twice except the sums: they start from 0.
    const bool sums = op == ReduceOp::kSum || op == ReduceOp::kMean;
    double acc = sums ? 0.0 : base[axes_offset(index.reduced, 0)];
    for (int64_t r = lane; r < index.count; r += 32) {
      acc = combine(op, acc, base[axes_offset(index.reduced, r)]);
    }
    for (int offset = 16; offset > 0; offset /= 2) {
      acc = combine(op, acc, __shfl_xor_sync(0xffffffffu, acc, offset));
    }
    if (op == ReduceOp::kMean) acc /= static_cast<double>(index.count);
    if (lane == 0) y[o] = static_cast<float>(acc);
  }
}

// One thread per (outer, inner) line, in order along the line.
__global__ void cumsum_kernel(const float* x, float* y, int64_t outer,
                              int64_t length, int64_t inner, bool exclusive,
                              bool reverse) {
  const int64_t lines = outer * inner;
  for (int64_t line = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       line < lines; line += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = (line / inner) * length * inner + line % inner;
    double sum = 0.0;
    for (int64_t step = 0; step < length; ++step) {
      const int64_t k = reverse ? length - 1 - step : step;
      const int64_t at = base + k * inner;
      const double value = x[at];
      if (!exclusive) sum += value;
      y[at] = static_cast<float>(sum);
      if (exclusive) sum += value;
    }
  }
}

}  // namespace

cudaError_t launch_reduce(ReduceOp op, const float* x, float* y,
                          const ReduceIndex& index, float empty_value,
                          cudaStream_t stream) {
  if (index.outputs == 0) return cudaSuccess;
  reduce_kernel<<<blocks_for(index.outputs, kWarpsPerBlock), kThreads, 0,
                  stream>>>(op, x, y, index, empty_value);
  return cudaGetLastError();
}

cudaError_t launch_cumsum(const float* x, float* y, int64_t outer,
                          int64_t length, int64_t inner, bool exclusive,
                          bool reverse, cudaStream_t stream) {
  const int64_t lines = outer * inner;
  if (lines == 0 || length == 0) return cudaSuccess;
  cumsum_kernel<<<blocks_for(lines, kThreads), kThreads, 0, stream>>>(
      x, y, outer, length, inner, exclusive, reverse);
  return cudaGetLastError();
}

}  // namespace seqrt::cuda
