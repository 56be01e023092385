// The AVX-512 GEMVs with f32 activations (4-bit by table lookup, 8-bit)
// against the dequantised product in double: 1 to 4 rows of X, W's rows
// not a multiple of the 4 a group takes, blocks of 16 (8-bit) and 32 to
// 256 (a 4-bit chunk is a whole block or part of one), K with a tail past
// the last chunk and a short last block, zero points or none.
#include <gtest/gtest.h>

#include <vector>

#include "backends/cpu/kernels/quantized_linear_avx512.h"
#include "backends/cpu/kernels/quantized_linear_test_util.h"
#include "ops/linalg/quantized_linear.h"

namespace seqrt::cpu {
namespace {

using quantized_testing::expect_close;
using quantized_testing::make;
using quantized_testing::Problem;

// Σ_k x·(code − zp)·scale in double.
std::vector<double> exact(const Problem& p) {
  const QuantizedWeights& w = p.w;
  std::vector<double> y(static_cast<size_t>(p.rows * p.n), 0.0);
  for (int64_t r = 0; r < p.rows; ++r) {
    for (int64_t j = 0; j < p.n; ++j) {
      double sum = 0;
      for (int64_t i = 0; i < p.k; ++i) {
        const int64_t at = j * w.n_blocks + i / w.block_size;
        const int zp =
            w.zero_points ? w.zero_points[at] : default_zero_point(w.bits);
        sum += static_cast<double>(p.x[r * p.k + i]) *
               (quantized_code(w.codes + j * w.row_bytes, i, w.bits) - zp) *
               w.scales[at];
      }
      y[r * p.n + j] = sum;
    }
  }
  return y;
}

TEST(QuantizedLinearAvx512, GemvMatchesTheDequantisedProduct) {
  if (!avx512_gemv_takes(make(1, 64, 1, 4, 32, false, 0).w)) {
    GTEST_SKIP() << "this CPU has no AVX-512 (or SEQRT_CPU_AVX512_GEMV=0)";
  }
  EXPECT_FALSE(avx512_gemv_takes(make(1, 64, 1, 4, 16, false, 0).w));
  unsigned seed = 1;
  for (int64_t bits : {4, 8}) {
    for (int64_t block : {16, 32, 64, 128, 256}) {
      if (bits == 4 && block == 16) continue;  // avx512_gemv_takes says no
      for (int64_t k : {256, 200, 1000}) {
        for (int64_t rows : {1, 2, 3, 4}) {
          const Problem p = make(rows, k, 37, bits, block, seed % 2 == 0, seed);
          ++seed;
          std::vector<float> x = p.x;
          if (bits == 4) {
            for (int64_t r = 0; r < rows; ++r) {
              avx512_permute_4bit(p.x.data() + r * k, k, x.data() + r * k);
            }
          }
          std::vector<float> y(static_cast<size_t>(rows * p.n));
          avx512_gemv(x.data(), k, rows, p.w, 0, p.n, y.data(), p.n);
          expect_close(y, exact(p), bits == 4 ? "4-bit" : "8-bit");
        }
      }
    }
  }
}

}  // namespace
}  // namespace seqrt::cpu
