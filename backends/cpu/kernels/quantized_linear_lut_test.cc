// The table-lookup GEMV of 4-bit weights (AVX-512) against the dequantised
// product in double: 1 to 4 rows of X, W's rows not a multiple of the 4 a
// group takes, blocks of 32 to 256 (a chunk is a whole block or part of
// one), K with a tail past the last chunk and a short last block, zero
// points or none.
#include <gtest/gtest.h>

#include <vector>

#include "backends/cpu/kernels/quantized_linear_lut.h"
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
            w.zero_points ? w.zero_points[at] : default_zero_point(4);
        sum += static_cast<double>(p.x[r * p.k + i]) *
               (quantized_code(w.codes + j * w.row_bytes, i, 4) - zp) *
               w.scales[at];
      }
      y[r * p.n + j] = sum;
    }
  }
  return y;
}

TEST(QuantizedLinearLut, GemvMatchesTheDequantisedProduct) {
  if (!lut_gemv_takes(make(1, 64, 1, 4, 32, false, 0).w)) {
    GTEST_SKIP() << "this CPU has no AVX-512 (or SEQRT_CPU_LUT_GEMV=0)";
  }
  EXPECT_FALSE(lut_gemv_takes(make(1, 64, 1, 4, 16, false, 0).w));
  EXPECT_FALSE(lut_gemv_takes(make(1, 64, 1, 8, 32, false, 0).w));
  unsigned seed = 1;
  for (int64_t block : {32, 64, 128, 256}) {
    for (int64_t k : {256, 200, 1000}) {
      for (int64_t rows : {1, 2, 3, 4}) {
        const Problem p = make(rows, k, 37, 4, block, seed % 2 == 0, seed);
        ++seed;
        std::vector<float> x(p.x.size());
        for (int64_t r = 0; r < rows; ++r) {
          lut_permute(p.x.data() + r * k, k, x.data() + r * k);
        }
        std::vector<float> y(static_cast<size_t>(rows * p.n));
        lut_gemv(x.data(), k, rows, p.w, 0, p.n, y.data(), p.n);
        expect_close(y, exact(p), "lut");
      }
    }
  }
}

}  // namespace
}  // namespace seqrt::cpu
