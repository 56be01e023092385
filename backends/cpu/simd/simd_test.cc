#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "backends/cpu/simd/gemm.h"
#include "backends/cpu/simd/vec.h"

namespace seqrt::cpu {
namespace {

// Lengths around every vector width, so both main loops and tails run.
const size_t kLengths[] = {0, 1, 3, 7, 8, 15, 16, 17, 31, 33, 64, 100};

std::vector<float> ramp(size_t n, float start, float step) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = start + step * static_cast<float>(i);
  return x;
}

TEST(Simd, DotAxpyScaleMatchScalarLoops) {
  for (size_t n : kLengths) {
    std::vector<float> a = ramp(n, -1.0f, 0.03f), b = ramp(n, 0.5f, -0.02f);
    double want = 0;
    for (size_t i = 0; i < n; ++i) want += double(a[i]) * b[i];
    EXPECT_NEAR(dot(a.data(), b.data(), n), want, 1e-4) << n;

    std::vector<float> y = b;
    axpy(2.0f, a.data(), y.data(), n);
    for (size_t i = 0; i < n; ++i) EXPECT_FLOAT_EQ(y[i], b[i] + 2.0f * a[i]);
    scale(-0.5f, y.data(), n);
    for (size_t i = 0; i < n; ++i) {
      EXPECT_FLOAT_EQ(y[i], -0.5f * (b[i] + 2.0f * a[i]));
    }
  }
}

TEST(Simd, MaxAndSoftmaxRow) {
  EXPECT_EQ(max_value(nullptr, 0), -std::numeric_limits<float>::infinity());
  for (size_t n : kLengths) {
    if (n == 0) continue;
    std::vector<float> x = ramp(n, -3.0f, 0.25f);
    float m = max_value(x.data(), n);
    EXPECT_FLOAT_EQ(m, x.back());
    std::vector<float> e = x;
    float sum = exp_shifted_sum(e.data(), n, m);
    double want_sum = 0;
    for (size_t i = 0; i < n; ++i) {
      double want = std::exp(double(x[i]) - m);
      EXPECT_NEAR(e[i], want, 1e-6 * want + 1e-7);
      want_sum += want;
    }
    EXPECT_NEAR(sum, want_sum, 1e-5 * want_sum);
  }
}

TEST(Simd, ActivationsStayFiniteAtExtremes) {
  std::vector<float> x = {-1e4f, -100.0f, -1.0f,  0.0f,  1.0f,  100.0f,
                          1e4f,  -88.0f,  88.0f,  3.0f,  -3.0f, 0.5f,
                          -0.5f, 10.0f,   -10.0f, 20.0f, -20.0f};
  std::vector<float> s = x, silu = x, e = x, t = x;
  sigmoid_inplace(s.data(), s.size());
  tanh_inplace(t.data(), t.size());
  silu_inplace(silu.data(), silu.size());
  exp_inplace(e.data(), 7);
  for (size_t i = 0; i < x.size(); ++i) {
    double want = 1.0 / (1.0 + std::exp(-double(x[i])));
    EXPECT_NEAR(s[i], want, 1e-6) << x[i];
    EXPECT_NEAR(silu[i], x[i] * want, 1e-5 * std::abs(x[i]) + 1e-6) << x[i];
    EXPECT_NEAR(t[i], std::tanh(double(x[i])), 1e-6) << x[i];
  }
  EXPECT_EQ(e[0], 0.0f);
  EXPECT_NEAR(e[3], 1.0f, 1e-7);
}

TEST(Simd, SgemmAllTransposes) {
  const int64_t m = 5, n = 7, k = 3;
  std::vector<float> a = ramp(m * k, -1.0f, 0.1f), b = ramp(k * n, 0.3f, 0.05f);
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      // Element (i, p) of op(A) and (p, j) of op(B), stored per transpose.
      auto A = [&](int64_t i, int64_t p) {
        return ta ? a[p * m + i] : a[i * k + p];
      };
      auto B = [&](int64_t p, int64_t j) {
        return tb ? b[j * k + p] : b[p * n + j];
      };
      std::vector<float> c(m * n, 1.0f);
      sgemm(ta, tb, m, n, k, 2.0f, a.data(), ta ? m : k, b.data(), tb ? k : n,
            0.5f, c.data(), n);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double want = 0.5;
          for (int64_t p = 0; p < k; ++p) want += 2.0 * A(i, p) * B(p, j);
          EXPECT_NEAR(c[i * n + j], want, 1e-5) << ta << tb << i << j;
        }
      }
    }
  }
}

}  // namespace
}  // namespace seqrt::cpu
