// What the tests of the hand-written quantized GEMVs share: a seeded
// problem (X, W's codes, scales and zero points) and a comparison with
// sums in double.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "backends/cpu/kernels/quantized_linear.h"
#include "ops/linalg/quantized_linear.h"

namespace seqrt::cpu::quantized_testing {

struct Problem {
  int64_t rows, k, n, bits, block;
  bool zero_points;
  std::vector<float> x, scales;
  std::vector<uint8_t> codes, zps;
  QuantizedWeights w;
};

inline Problem make(int64_t rows, int64_t k, int64_t n, int64_t bits,
                    int64_t block, bool zero_points, unsigned seed) {
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

inline void expect_close(const std::vector<float>& got,
                         const std::vector<double>& want, const char* what) {
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 2e-6 * scale) << what << " at " << i;
  }
}

}  // namespace seqrt::cpu::quantized_testing
