// Highway's dynamic dispatch: this file is compiled once per target by
// foreach_target.h, and HWY_DYNAMIC_DISPATCH picks the best at run time.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/chunk_gemm_simd.cc"
#include <hwy/foreach_target.h>
#include <hwy/highway.h>
// clang-format on

#include "backends/cpu/kernels/chunk_gemm.h"

HWY_BEFORE_NAMESPACE();
namespace seqrt::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

// Rows per register tile: kRows × 2 vectors of accumulators (12 on AVX2)
// plus two B vectors and one broadcast fit the 16 vector registers.
constexpr int kRows = 6;

// Where row r, column p of A lives relative to `base` (row i of the tile).
template <bool kTransA>
HWY_INLINE const float* a_at(const float* base, int64_t ld, int64_t r,
                             int64_t p) {
  return kTransA ? base + p * ld + r : base + r * ld + p;
}

// C[i.., j..] (R rows, NV vectors) = alpha·A B + beta·C over the whole k.
template <bool kTransA, int R, int NV>
HWY_INLINE void Tile(int64_t k, float alpha, const float* a, int64_t lda,
                     const float* b, int64_t ldb, float beta, float* c,
                     int64_t ldc) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  V acc[R][NV];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = hn::Zero(d);
  }
  for (int64_t p = 0; p < k; ++p) {
    const float* bp = b + p * ldb;
    V bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = hn::LoadU(d, bp + v * lanes);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const V av = hn::Set(d, *a_at<kTransA>(a, lda, r, p));
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = hn::MulAdd(av, bv[v], acc[r][v]);
    }
  }
  const V valpha = hn::Set(d, alpha);
  const V vbeta = hn::Set(d, beta);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      float* cp = c + r * ldc + v * lanes;
      V out = hn::Mul(valpha, acc[r][v]);
      if (beta != 0.0f) out = hn::MulAdd(vbeta, hn::LoadU(d, cp), out);
      hn::StoreU(out, d, cp);
    }
  }
}

// The problem of one call, shared by its tiles.
struct ChunkGemmCall {
  int64_t m, k;
  float alpha;
  const float* a;
  int64_t lda;
  int64_t ldb;
  float beta;
  int64_t ldc;
  Triangle triangle;
};

// Rows [i, i + R) of the column block starting at column j.
template <bool kTransA, int R, int NV>
HWY_INLINE void TileAt(const ChunkGemmCall& p, int64_t i, int64_t j,
                       const float* b, float* c) {
  int64_t k = p.k;
  if (p.triangle == Triangle::kLowerA) k = i + R < k ? i + R : k;
  if (p.triangle == Triangle::kLowerC && j > i + R - 1) return;
  const float* a = p.a + i * (kTransA ? 1 : p.lda);
  Tile<kTransA, R, NV>(k, p.alpha, a, p.lda, b, p.ldb, p.beta, c + i * p.ldc,
                       p.ldc);
}

// The rows of the column block at column j (b, c point at that column), in
// tiles of kRows and a tail.
template <bool kTransA, int NV>
void ColumnBlock(const ChunkGemmCall& p, int64_t j, const float* b, float* c) {
  int64_t i = 0;
  for (; i + kRows <= p.m; i += kRows)
    TileAt<kTransA, kRows, NV>(p, i, j, b, c);
  switch (p.m - i) {
    case 5:
      TileAt<kTransA, 5, NV>(p, i, j, b, c);
      break;
    case 4:
      TileAt<kTransA, 4, NV>(p, i, j, b, c);
      break;
    case 3:
      TileAt<kTransA, 3, NV>(p, i, j, b, c);
      break;
    case 2:
      TileAt<kTransA, 2, NV>(p, i, j, b, c);
      break;
    case 1:
      TileAt<kTransA, 1, NV>(p, i, j, b, c);
      break;
    default:
      break;
  }
}

// Columns [j0, n) past the last whole vector: plain dot products.
template <bool kTransA>
void ScalarColumns(const ChunkGemmCall& p, int64_t j0, int64_t n,
                   const float* b, float* c) {
  for (int64_t i = 0; i < p.m; ++i) {
    int64_t k = p.triangle == Triangle::kLowerA && i + 1 < p.k ? i + 1 : p.k;
    for (int64_t j = j0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t q = 0; q < k; ++q) {
        sum += *a_at<kTransA>(p.a, p.lda, i, q) * b[q * p.ldb + j];
      }
      float* cp = c + i * p.ldc + j;
      *cp = p.beta != 0.0f ? p.alpha * sum + p.beta * *cp : p.alpha * sum;
    }
  }
}

template <bool kTransA>
void Gemm(const ChunkGemmCall& p, int64_t n, const float* b, float* c) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  // Column blocks outermost: a block's k × 2 vectors of B stay in L1 while
  // every row tile of A passes over it.
  int64_t j = 0;
  for (; j + 2 * lanes <= n; j += 2 * lanes) {
    ColumnBlock<kTransA, 2>(p, j, b + j, c + j);
  }
  for (; j + lanes <= n; j += lanes)
    ColumnBlock<kTransA, 1>(p, j, b + j, c + j);
  if (j < n) ScalarColumns<kTransA>(p, j, n, b, c);
}

void ChunkGemmImpl(int64_t m, int64_t n, int64_t k, float alpha,
                   const GemmOperand& a, const float* b, int64_t ldb,
                   float beta, float* c, int64_t ldc, Triangle triangle) {
  const ChunkGemmCall p{m, k, alpha, a.data, a.ld, ldb, beta, ldc, triangle};
  if (a.transposed) {
    Gemm<true>(p, n, b, c);
  } else {
    Gemm<false>(p, n, b, c);
  }
}

}  // namespace seqrt::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace seqrt::cpu {

HWY_EXPORT(ChunkGemmImpl);

void chunk_gemm(int64_t m, int64_t n, int64_t k, float alpha,
                const GemmOperand& a, const float* b, int64_t ldb, float beta,
                float* c, int64_t ldc, Triangle triangle) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    // An empty sum: B may be a null (empty) buffer, so it is never offset.
    for (int64_t i = 0; i < m; ++i) {
      float* row = c + i * ldc;
      for (int64_t j = 0; j < n; ++j)
        row[j] = beta != 0.0f ? beta * row[j] : 0.0f;
    }
    return;
  }
  HWY_DYNAMIC_DISPATCH(ChunkGemmImpl)
  (m, n, k, alpha, a, b, ldb, beta, c, ldc, triangle);
}

void transpose_block(const float* src, int64_t rows, int64_t cols,
                     int64_t ld_src, float* dst, int64_t ld_dst) {
  // Chunks are a few dozen rows: every source line stays in L1 while the
  // destination is written row by row.
  for (int64_t c = 0; c < cols; ++c) {
    float* out = dst + c * ld_dst;
    for (int64_t r = 0; r < rows; ++r) out[r] = src[r * ld_src + c];
  }
}

}  // namespace seqrt::cpu
#endif  // HWY_ONCE
