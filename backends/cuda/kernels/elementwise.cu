#include "backends/cuda/kernels/elementwise.h"

namespace seqrt::cuda {
namespace {

constexpr int kThreads = 256;

int blocks_for(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  // Grid-stride loops cover the rest; 65535·32 blocks fill any GPU.
  return static_cast<int>(blocks < 65535 * 32 ? blocks : 65535 * 32);
}

__device__ float apply_unary(UnaryOp op, float x) {
  switch (op) {
    case UnaryOp::kRelu:
      return x > 0.0f ? x : 0.0f;
    case UnaryOp::kSigmoid:
      return 1.0f / (1.0f + expf(-x));
    case UnaryOp::kTanh:
      return tanhf(x);
    case UnaryOp::kExp:
      return expf(x);
    case UnaryOp::kLog:
      return logf(x);
    case UnaryOp::kNeg:
      return -x;
    case UnaryOp::kSqrt:
      return sqrtf(x);
    case UnaryOp::kAbs:
      return fabsf(x);
    case UnaryOp::kErf:
      return erff(x);
  }
  return x;
}

__device__ float apply_binary(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::kAdd:
      return a + b;
    case BinaryOp::kSub:
      return a - b;
    case BinaryOp::kMul:
      return a * b;
    case BinaryOp::kDiv:
      return a / b;
    // ONNX Max/Min propagate NaN.
    case BinaryOp::kMax:
      return (isnan(a) || isnan(b)) ? a + b : fmaxf(a, b);
    case BinaryOp::kMin:
      return (isnan(a) || isnan(b)) ? a + b : fminf(a, b);
    case BinaryOp::kPow:
      return powf(a, b);
  }
  return a;
}

// The op is a kernel argument, not a template parameter: one instantiation
// per kernel keeps the plugin's build time down, and the switch is
// uniform across the grid so it costs no divergence.
__global__ void unary_kernel(UnaryOp op, const float* x, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    y[i] = apply_unary(op, x[i]);
  }
}

__global__ void binary_kernel(BinaryOp op, const float* a, const float* b,
                              float* out, BroadcastIndex index, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t rest = i;
    int64_t ia = 0;
    int64_t ib = 0;
    for (int axis = index.rank - 1; axis >= 0; --axis) {
      int64_t coord = rest % index.dims[axis];
      rest /= index.dims[axis];
      ia += coord * index.a_strides[axis];
      ib += coord * index.b_strides[axis];
    }
    out[i] = apply_binary(op, a[ia], b[ib]);
  }
}

}  // namespace

cudaError_t launch_unary(UnaryOp op, const float* x, float* y, int64_t n,
                         cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  unary_kernel<<<blocks_for(n), kThreads, 0, stream>>>(op, x, y, n);
  return cudaGetLastError();
}

cudaError_t launch_binary(BinaryOp op, const float* a, const float* b,
                          float* out, const BroadcastIndex& index, int64_t n,
                          cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  binary_kernel<<<blocks_for(n), kThreads, 0, stream>>>(op, a, b, out, index,
                                                        n);
  return cudaGetLastError();
}

}  // namespace seqrt::cuda
