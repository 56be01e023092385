// The VNNI GEMV of the int8-activation quantized Linear (CPUs with
// AVX512-VNNI) against exact integer sums, at more shapes than the
// conformance suite gives it: 4- and 8-bit codes, 1 to 4 rows of X, W's
// rows not a multiple of the 4 a group takes, blocks of 16 (8-bit), 32, 64,
// 128 and 256 (4 to 1/2 per 512-bit unit), K with a tail past the last unit
// and a short last block, zero points or none, X of both signs or all
// positive.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "backends/cpu/kernels/quantized_linear.h"
#include "backends/cpu/kernels/quantized_linear_test_util.h"
#include "backends/cpu/kernels/quantized_linear_vnni.h"
#include "ops/linalg/quantized_linear.h"

namespace seqrt::cpu {
namespace {

using quantized_testing::expect_close;
using quantized_testing::make;
using quantized_testing::Problem;

// The contract's sums in double, from the same int8 codes of X.
std::vector<double> exact(const Problem& p) {
  const QuantizedWeights& w = p.w;
  std::vector<double> y(static_cast<size_t>(p.rows * p.n));
  std::vector<int8_t> xq(static_cast<size_t>(p.k));
  std::vector<float> xs(static_cast<size_t>(w.n_blocks));
  for (int64_t r = 0; r < p.rows; ++r) {
    quantize_activation_row(p.x.data() + r * p.k, w, xq.data(), xs.data());
    for (int64_t j = 0; j < p.n; ++j) {
      double sum = 0;
      for (int64_t b = 0; b < w.n_blocks; ++b) {
        const int64_t at = j * w.n_blocks + b;
        const int zp =
            w.zero_points ? w.zero_points[at] : default_zero_point(w.bits);
        int64_t dot = 0;
        for (int64_t i = b * w.block_size;
             i < std::min(p.k, (b + 1) * w.block_size); ++i) {
          dot += (quantized_code(w.codes + j * w.row_bytes, i, w.bits) - zp) *
                 xq[i];
        }
        sum += static_cast<double>(dot) * w.scales[at] * xs[b];
      }
      y[r * p.n + j] = sum;
    }
  }
  return y;
}

std::vector<Problem> problems() {
  std::vector<Problem> all;
  unsigned seed = 1;
  for (int64_t bits : {4, 8}) {
    for (int64_t block : {16, 32, 64, 128, 256}) {
      if (bits == 4 && block == 16) continue;  // vnni_gemv_takes says no
      for (int64_t k : {256, 200, 1000}) {
        for (int64_t rows : {1, 3, 4}) {
          all.push_back(make(rows, k, 37, bits, block, seed % 2 == 0, seed));
          ++seed;
        }
      }
    }
  }
  return all;
}

// The vectorised quantization of X gives the op's codes and scale exactly:
// short and long blocks, ties (x·(1/xs) at k + 0.5, rounded to even), all
// zeros, and blocks holding NaN or ±inf (a NaN scale, codes 0).
TEST(QuantizedLinearI8, VectorisedActivationQuantizationMatchesTheOp) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> real(-3.0f, 3.0f);
  std::vector<std::vector<float>> blocks;
  for (int64_t count : {1, 7, 16, 33, 128, 256}) {
    std::vector<float> x(static_cast<size_t>(count));
    for (float& v : x) v = real(rng);
    blocks.push_back(x);
  }
  std::vector<float> ties = {127.0f, 2.5f, 3.5f, -2.5f, -0.5f, 0.5f, 126.5f};
  ties.resize(20, 1.5f);
  blocks.push_back(ties);
  blocks.push_back(std::vector<float>(24, 0.0f));
  for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
    std::vector<float> x = blocks[3];
    x[30] = bad;
    blocks.push_back(x);
  }
  for (const std::vector<float>& x : blocks) {
    const auto count = static_cast<int64_t>(x.size());
    std::vector<int8_t> want(x.size(), 99), got(x.size(), 99);
    const float want_scale =
        quantize_activation_block(x.data(), count, want.data());
    const float got_scale =
        quantize_activation_simd(x.data(), count, got.data());
    if (std::isnan(want_scale)) {
      EXPECT_TRUE(std::isnan(got_scale)) << "block of " << count;
    } else {
      EXPECT_EQ(got_scale, want_scale) << "block of " << count;
    }
    EXPECT_EQ(got, want) << "block of " << count;
  }
}

TEST(QuantizedLinearI8, VnniGemvMatchesExactSums) {
  if (!vnni_gemv_takes(make(1, 64, 1, 4, 32, false, 0).w)) {
    GTEST_SKIP() << "this CPU has no AVX512-VNNI (or SEQRT_CPU_VNNI=0)";
  }
  // A lane of 4-bit codes in blocks of 16 would span two blocks: those go
  // to the float kernels.
  EXPECT_FALSE(vnni_gemv_takes(make(1, 64, 1, 4, 16, false, 0).w));
  EXPECT_TRUE(vnni_gemv_takes(make(1, 64, 1, 8, 16, false, 0).w));
  for (const Problem& p : problems()) {
    const VnniActivations x = vnni_activations(p.x.data(), p.rows, p.w);
    std::vector<float> y(static_cast<size_t>(p.rows * p.n));
    vnni_gemv(x, 0, p.rows, p.w, 0, p.n, y.data(), p.n);
    expect_close(y, exact(p), "vnni");
  }
}

}  // namespace
}  // namespace seqrt::cpu
