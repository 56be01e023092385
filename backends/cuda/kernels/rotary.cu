#include "backends/cuda/kernels/rotary.h"

namespace seqrt::cuda {
namespace {

constexpr int kThreads = 256;

// One output element per iteration; each reads itself and its partner.
__global__ void rotary_kernel(RotaryArgs a, int64_t n) {
  const int64_t half = a.rotary_dim / 2;
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < n;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = idx % a.head_size;
    if (c >= a.rotary_dim) {
      a.y[idx] = a.x[idx];
      continue;
    }
    const int64_t rest = idx / a.head_size;
    int64_t b, s;
    if (a.heads_first) {
      s = rest % a.seq;
      b = rest / (a.seq * a.heads);
    } else {
      s = (rest / a.heads) % a.seq;
      b = rest / (a.heads * a.seq);
    }
    const int64_t token = b * a.seq + s;
    const int64_t row = a.positions != nullptr ? a.positions[token] : token;
    const bool first = a.interleaved ? c % 2 == 0 : c < half;
    const int64_t pair = a.interleaved ? c / 2 : (first ? c : c - half);
    const int64_t partner =
        a.interleaved ? (first ? c + 1 : c - 1) : (first ? c + half : c - half);
    const float cos_v = a.cos[row * half + pair];
    const float sin_v = a.sin[row * half + pair];
    const float self = a.x[idx];
    const float other = a.x[idx - c + partner];
    // (x1, x2) -> (x1 cos - x2 sin, x1 sin + x2 cos)
    a.y[idx] =
        first ? self * cos_v - other * sin_v : other * sin_v + self * cos_v;
  }
}

}  // namespace

cudaError_t launch_rotary(const RotaryArgs& args, cudaStream_t stream) {
  const int64_t n = args.batch * args.seq * args.heads * args.head_size;
  if (n == 0) return cudaSuccess;
  int64_t blocks = (n + kThreads - 1) / kThreads;
  if (blocks > 65535 * 32) blocks = 65535 * 32;
  rotary_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(args,
                                                                        n);
  return cudaGetLastError();
}

}  // namespace seqrt::cuda
