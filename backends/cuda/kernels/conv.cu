#include "backends/cuda/kernels/conv.h"

namespace seqrt::cuda {
namespace {

__global__ void conv_kernel(const float* x, const float* w, const float* bias,
                            float* y, ConvShape s, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t m = (i / (s.out_w * s.out_h)) % s.out_channels;
    y[i] = conv_output(s, x, w, i) + (bias != nullptr ? bias[m] : 0.0f);
  }
}

}  // namespace

cudaError_t launch_conv(const float* x, const float* w, const float* bias,
                        float* y, const ConvShape& shape, cudaStream_t stream) {
  const int64_t n = shape.outputs();
  if (n == 0) return cudaSuccess;
  const int64_t blocks = (n + 255) / 256;
  conv_kernel<<<static_cast<unsigned>(blocks < 65535 ? blocks : 65535), 256, 0,
                stream>>>(x, w, bias, y, shape, n);
  return cudaGetLastError();
}

}  // namespace seqrt::cuda
