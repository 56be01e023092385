// Row-major single-precision GEMM for GEMM-shaped blocks of the sequence
// kernels (intra-chunk products, tiles), through oneDNN's sgemm: it is
// JIT-compiled for the CPU at hand and runs serially when called from inside
// a parallel_for, so kernels parallelise over heads and call it per block.
#pragma once

#include <cstdint>

namespace seqrt::cpu {

// C = alpha * op(A) * op(B) + beta * C, with op(X) = X or Xᵀ; A is M×K
// after op, B is K×N after op, C is M×N; ld* are row strides in elements.
void sgemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
           float alpha, const float* a, int64_t lda, const float* b,
           int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace seqrt::cpu
