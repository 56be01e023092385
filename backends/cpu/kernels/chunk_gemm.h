// Register-blocked products for the small, cache-resident blocks of the
// chunkwise linear-attention kernels (chunked_state.h): chunks of 16 to 64
// tokens against a d_k × d_v state (Highway, run-time dispatch). They read
// the operands in place, where oneDNN's sgemm packs them on every call: on
// this machine they match sgemm at 64×128×128 and are 1.3–1.5× faster at
// the 16-row blocks of short chunks. They also skip the zero half of the
// causal intra-chunk products (Triangle), which a GEMM call cannot.
#pragma once

#include <cstdint>

namespace seqrt::cpu {

// One operand of chunk_gemm: `data` with row stride `ld`; when `transposed`
// the operand is the transpose of the matrix stored there (element (i, p)
// at data[p·ld + i]).
struct GemmOperand {
  const float* data;
  int64_t ld;
  bool transposed = false;
};

// Causal structure a product may skip.
enum class Triangle {
  kNone,
  // A is lower triangular (A(i, p) = 0 for p > i): row i sums p ≤ i only.
  kLowerA,
  // Only C(i, j) with j ≤ i is wanted; whole tiles above the diagonal are
  // skipped and left unspecified (the caller overwrites them).
  kLowerC,
};

// C = alpha·A·B + beta·C with A m×k (possibly transposed), B k×n row-major,
// C m×n row-major (row stride ldc). beta = 0 never reads C.
void chunk_gemm(int64_t m, int64_t n, int64_t k, float alpha,
                const GemmOperand& a, const float* b, int64_t ldb, float beta,
                float* c, int64_t ldc, Triangle triangle = Triangle::kNone);

// dst (cols × rows, row stride ld_dst) = srcᵀ, src rows × cols (ld_src).
void transpose_block(const float* src, int64_t rows, int64_t cols,
                     int64_t ld_src, float* dst, int64_t ld_dst);

}  // namespace seqrt::cpu
