#include "backends/cuda/kernels/causal_conv.h"

namespace seqrt::cuda {
namespace {

constexpr int kThreads = 256;

int blocks_for(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  // Grid-stride loops cover the rest.
  return static_cast<int>(blocks < 65535 * 32 ? blocks : 65535 * 32);
}

// One output element per iteration: tap i reads position t - (k-1) + i of
// the input, or the past state (zeros when absent) before t = 0.
__global__ void causal_conv_kernel(CausalConvArgs a) {
  const int64_t n = a.batch * a.channels * a.length;
  const int64_t k = a.kernel;
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < n;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = idx / a.length;
    const int64_t t = idx % a.length;
    const int64_t c = row % a.channels;
    const float* w = a.weight + c * k;
    float out = a.bias != nullptr ? a.bias[c] : 0.0f;
    for (int64_t i = 0; i < k; ++i) {
      const int64_t pos = t - (k - 1) + i;
      float x = 0.0f;
      if (pos >= 0) {
        x = a.input[row * a.length + pos];
      } else if (a.past_state != nullptr) {
        x = a.past_state[row * (k - 1) + (k - 1) + pos];
      }
      out += w[i] * x;
    }
    if (a.silu) out /= 1.0f + expf(-out);
    a.output[idx] = out;
  }
}

// One thread per (batch, channel) row: state[i] = ext[L + i] where ext =
// [past, input]. Ascending i reads ext[L + i] (past index L + i > i when
// L >= 1) before any later write reaches it, so present may alias past.
__global__ void causal_conv_state_kernel(CausalConvArgs a) {
  const int64_t rows = a.batch * a.channels;
  const int64_t keep = a.kernel - 1;
  for (int64_t row = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; row < rows;
       row += int64_t(gridDim.x) * blockDim.x) {
    for (int64_t i = 0; i < keep; ++i) {
      const int64_t pos = a.length + i - keep;  // position in the input
      float value = 0.0f;
      if (pos >= 0) {
        value = a.input[row * a.length + pos];
      } else if (a.past_state != nullptr) {
        value = a.past_state[row * keep + a.length + i];
      }
      a.present_state[row * keep + i] = value;
    }
  }
}

}  // namespace

cudaError_t launch_causal_conv(const CausalConvArgs& args,
                               cudaStream_t stream) {
  const int64_t rows = args.batch * args.channels;
  if (rows == 0) return cudaSuccess;
  if (args.length > 0) {
    causal_conv_kernel<<<blocks_for(rows * args.length), kThreads, 0, stream>>>(
        args);
    cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess) return error;
  }
  if (args.present_state == nullptr || args.kernel <= 1) return cudaSuccess;
  // Stream order: the outputs have read the past state before it moves.
  causal_conv_state_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace seqrt::cuda
