// The VNNI GEMV of the int8-activation quantized Linear (CPUs with
// AVX512-VNNI) against exact integer sums, at more shapes than the
// conformance suite gives it, and for 8-bit codes and 2 to 4 rows, which
// quantized_linear sends to the float kernels instead: blocks 32 (4-bit
// units spanning two blocks), 64 and 128, K with a tail past the last unit
// and a short last block, zero points or none, X of both signs or all
// positive.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "backends/cpu/kernels/quantized_linear.h"
#include "backends/cpu/kernels/quantized_linear_vnni.h"
#include "ops/linalg/quantized_linear.h"

namespace seqrt::cpu {
namespace {

struct Problem {
  int64_t rows, k, n, bits, block;
  bool zero_points;
  std::vector<float> x, scales;
  std::vector<uint8_t> codes, zps;
  QuantizedWeights w;
};

Problem make(int64_t rows, int64_t k, int64_t n, int64_t bits, int64_t block,
             bool zero_points, unsigned seed) {
  Problem p{rows, k, n, bits, block, zero_points, {}, {}, {}, {}, {}};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int> byte(0, 255);
  p.w.n = n;
  p.w.k = k;
  p.w.bits = bits;
  p.w.block_size = block;
  p.w.n_blocks = (k + block - 1) / block;
  p.w.row_bytes = quantized_row_bytes(k, bits);
  p.x.resize(static_cast<size_t>(rows * k));
  // Every third problem's X all positive, as after SiLU: Σ code·xq is then
  // far larger than the result, which a zero point taken off in float
  // would lose to cancellation.
  const float shift = seed % 3 == 0 ? 1.0f : 0.0f;
  for (float& v : p.x) v = real(rng) + shift;
  p.codes.resize(static_cast<size_t>(n * p.w.row_bytes));
  for (uint8_t& c : p.codes) c = static_cast<uint8_t>(byte(rng));
  p.scales.resize(static_cast<size_t>(n * p.w.n_blocks));
  for (float& s : p.scales) s = 0.01f + 0.04f * std::fabs(real(rng));
  if (zero_points) {
    p.zps.resize(p.scales.size());
    for (uint8_t& z : p.zps) z = static_cast<uint8_t>(byte(rng) >> (8 - bits));
  }
  p.w.codes = p.codes.data();
  p.w.scales = p.scales.data();
  p.w.zero_points = zero_points ? p.zps.data() : nullptr;
  return p;
}

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
        const int zp = w.zero_points ? w.zero_points[at]
                                     : default_zero_point(w.bits);
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

void expect_close(const std::vector<float>& got, const std::vector<double>& want,
                  const char* what) {
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 2e-6 * scale) << what << " at " << i;
  }
}

std::vector<Problem> problems() {
  std::vector<Problem> all;
  unsigned seed = 1;
  for (int64_t bits : {4, 8}) {
    for (int64_t block : {32, 64, 128}) {
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

TEST(QuantizedLinearI8, VnniGemvMatchesExactSums) {
  if (!vnni_gemv_takes(make(1, 64, 1, 4, 32, false, 0).w)) {
    GTEST_SKIP() << "this CPU has no AVX512-VNNI (or SEQRT_CPU_VNNI=0)";
  }
  for (const Problem& p : problems()) {
    const VnniActivations x = vnni_activations(p.x.data(), p.rows, p.w);
    std::vector<float> y(static_cast<size_t>(p.rows * p.n));
    vnni_gemv(x, 0, p.rows, p.w, 0, p.n, y.data(), p.n);
    expect_close(y, exact(p), "vnni");
  }
}

}  // namespace
}  // namespace seqrt::cpu
