// Row-major fp32 matrix products through cuBLASLt, exact fp32 compute
// (no TF32), so results match the reference kernels' tolerances.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "graph/status.h"

namespace seqrt::cuda {

// C[b] (m x n) = A[b] (m x k) · B[b] (k x n) for b < batch, each operand
// `stride_*` floats after the previous one (0: the same matrix each time).
Status gemm_f32(cublasLtHandle_t handle, cudaStream_t stream, const float* a,
                const float* b, float* c, int64_t m, int64_t n, int64_t k,
                int64_t batch, int64_t stride_a, int64_t stride_b,
                int64_t stride_c);

// ONNX Gemm's product, row-major: Y (m x n) = alpha·op(A)·op(B) + beta·Y,
// op(A) = A (m x k) or, when trans_a, Aᵀ with A stored (k x m); op(B) = B
// (k x n) or Bᵀ with B stored (n x k). Y holds C broadcast when beta is
// used; with beta = 0 it is only written. k >= 1 (an empty sum is the
// caller's: Y = beta·C).
Status gemm_ex_f32(cublasLtHandle_t handle, cudaStream_t stream, const float* a,
                   const float* b, float* y, int64_t m, int64_t n, int64_t k,
                   bool trans_a, bool trans_b, float alpha, float beta);

}  // namespace seqrt::cuda
