// The stage combinations of seqrt::RungeKutta (OPS.md) as fused fp32
// kernels: the body runs node by node on the CUDA kernels, and each stage's
// next input and the running sum of b_i·F_i come from one pass over F_i.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace seqrt::cuda {

// next = y + a·f (skipped when next is null) and acc = acc_in + b·f over n
// elements; acc may be acc_in.
cudaError_t launch_rk_stage(const float* y, const float* f, float a,
                            float* next, const float* acc_in, float b,
                            float* acc, int64_t n, cudaStream_t stream);

// rk2_gated over `rows` rows of `width`: g = σ(f1·w[:width] + f2·w[width:] +
// bias[0]) per row, out = y + g·f1 + (1 − g)·f2.
cudaError_t launch_rk_gated(const float* y, const float* f1, const float* f2,
                            const float* weight, const float* bias, float* out,
                            int64_t rows, int64_t width, cudaStream_t stream);

}  // namespace seqrt::cuda
