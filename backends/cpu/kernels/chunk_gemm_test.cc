#include "backends/cpu/kernels/chunk_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace seqrt::cpu {
namespace {

std::vector<float> values(int64_t n, uint64_t seed) {
  std::vector<float> out(n);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& v : out) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    v = static_cast<float>(x >> 40) / static_cast<float>(1 << 23) - 1.0f;
  }
  return out;
}

struct Case {
  int64_t m, n, k;
  bool transposed;
  float alpha, beta;
};

// Every tile shape: row tails 1..5, a one-vector column block, scalar
// columns, k = 0, strides wider than the matrices.
TEST(ChunkGemm, MatchesDoubleProduct) {
  const Case cases[] = {
      {16, 128, 128, false, 1.0f, 0.0f}, {128, 128, 16, true, 0.5f, 0.9f},
      {7, 13, 5, false, 1.0f, 1.0f},     {11, 40, 9, true, -2.0f, 0.0f},
      {1, 3, 64, false, 1.0f, 0.5f},     {23, 24, 0, false, 1.0f, 0.25f},
      {64, 64, 128, false, 0.125f, 0.0f}};
  for (const Case& c : cases) {
    const int64_t lda = (c.transposed ? c.m : c.k) + 3;
    const int64_t ldb = c.n + 2, ldc = c.n + 1;
    const int64_t a_rows = c.transposed ? c.k : c.m;
    std::vector<float> a = values(a_rows * lda, 1), b = values(c.k * ldb, 2);
    std::vector<float> got = values(c.m * ldc, 3);
    std::vector<float> before = got;
    chunk_gemm(c.m, c.n, c.k, c.alpha, {a.data(), lda, c.transposed}, b.data(),
               ldb, c.beta, got.data(), ldc);
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        double sum = 0.0;
        for (int64_t p = 0; p < c.k; ++p) {
          double x = c.transposed ? a[p * lda + i] : a[i * lda + p];
          sum += x * b[p * ldb + j];
        }
        double want = c.alpha * sum + c.beta * before[i * ldc + j];
        ASSERT_NEAR(got[i * ldc + j], want, 1e-4 * (1.0 + std::abs(want)))
            << c.m << "x" << c.n << "x" << c.k << " at " << i << "," << j;
      }
      // The padding past column n is never written.
      for (int64_t j = c.n; j < ldc; ++j) {
        ASSERT_EQ(got[i * ldc + j], before[i * ldc + j]);
      }
    }
  }
}

// A lower-triangular A gives the full product; a lower-triangular C is
// exact on and below its diagonal.
TEST(ChunkGemm, TrianglesMatchFullProduct) {
  for (int64_t l : {5, 16, 29, 32}) {
    const int64_t n = 40;
    std::vector<float> a = values(l * l, 5), b = values(l * n, 6);
    for (int64_t i = 0; i < l; ++i) {
      for (int64_t p = i + 1; p < l; ++p) a[i * l + p] = 0.0f;
    }
    std::vector<float> full(l * n), lower(l * n);
    chunk_gemm(l, n, l, 1.0f, {a.data(), l}, b.data(), n, 0.0f, full.data(), n);
    chunk_gemm(l, n, l, 1.0f, {a.data(), l}, b.data(), n, 0.0f, lower.data(), n,
               Triangle::kLowerA);
    for (int64_t i = 0; i < l * n; ++i) ASSERT_FLOAT_EQ(lower[i], full[i]) << i;

    std::vector<float> sq = values(l * l, 7), want(l * l), got(l * l, -1.0f);
    chunk_gemm(l, l, l, 1.0f, {a.data(), l}, sq.data(), l, 0.0f, want.data(),
               l);
    chunk_gemm(l, l, l, 1.0f, {a.data(), l}, sq.data(), l, 0.0f, got.data(), l,
               Triangle::kLowerC);
    for (int64_t i = 0; i < l; ++i) {
      for (int64_t j = 0; j <= i; ++j) {
        ASSERT_FLOAT_EQ(got[i * l + j], want[i * l + j]) << i << "," << j;
      }
    }
  }
}

TEST(ChunkGemm, BetaZeroIgnoresNaNInOutput) {
  std::vector<float> a = values(4 * 8, 1), b = values(8 * 16, 2);
  std::vector<float> c(4 * 16, std::nanf(""));
  chunk_gemm(4, 16, 8, 1.0f, {a.data(), 8}, b.data(), 16, 0.0f, c.data(), 16);
  for (float x : c) EXPECT_TRUE(std::isfinite(x));
}

TEST(ChunkGemm, TransposeBlock) {
  const int64_t rows = 19, cols = 21, ld_src = 23, ld_dst = 20;
  std::vector<float> src = values(rows * ld_src, 4);
  std::vector<float> dst(cols * ld_dst, 0.0f);
  transpose_block(src.data(), rows, cols, ld_src, dst.data(), ld_dst);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      ASSERT_EQ(dst[c * ld_dst + r], src[r * ld_src + c]);
    }
  }
}

}  // namespace
}  // namespace seqrt::cpu
