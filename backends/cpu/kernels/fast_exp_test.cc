// FastExp and FastExp2 (simd/fast_exp-inl.h) against the exact functions,
// at the static target of this build (the code is the same on every
// target: no target-specific operations).
#include <gtest/gtest.h>

#include <hwy/highway.h>

#include <cmath>
#include <limits>

#include "backends/cpu/simd/fast_exp-inl.h"

namespace seqrt::cpu::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;

// The stated bound (about 2 ulp) with a little room for the test's own
// float rounding of x.
constexpr double kMaxRelativeError = 3e-7;

float fast_exp(float x) { return hn::GetLane(FastExp(D(), hn::Set(D(), x))); }
float fast_exp2(float x) { return hn::GetLane(FastExp2(D(), hn::Set(D(), x))); }

double relative_error(double got, double want) {
  return std::abs(got - want) / want;
}

TEST(FastExp, WithinStatedErrorOverItsRange) {
  double worst = 0;
  for (int i = 0; i <= 2000000; ++i) {
    const float x = -87.33f + (88.0f + 87.33f) * static_cast<float>(i) / 2e6f;
    worst = std::max(worst, relative_error(fast_exp(x), std::exp(double{x})));
  }
  EXPECT_LE(worst, kMaxRelativeError);
  EXPECT_EQ(fast_exp(0.0f), 1.0f);
}

TEST(FastExp, ClampsOutsideItsRange) {
  // Below the range: tiny, positive, normal; above it: large but finite.
  for (float x :
       {-88.0f, -100.0f, -1e30f, -std::numeric_limits<float>::infinity()}) {
    const float e = fast_exp(x);
    EXPECT_GT(e, 0.0f) << x;
    EXPECT_LE(e, std::ldexp(1.0f, -125)) << x;
  }
  for (float x : {89.0f, 1e30f, std::numeric_limits<float>::infinity()}) {
    EXPECT_TRUE(std::isfinite(fast_exp(x))) << x;
    EXPECT_GT(fast_exp(x), 1e38f) << x;
  }
}

TEST(FastExp2, WithinStatedErrorOverItsRange) {
  double worst = 0;
  for (int i = 0; i <= 2000000; ++i) {
    const float x = -126.0f + 253.0f * static_cast<float>(i) / 2e6f;
    worst = std::max(worst, relative_error(fast_exp2(x), std::exp2(double{x})));
  }
  EXPECT_LE(worst, kMaxRelativeError);
  EXPECT_EQ(fast_exp2(0.0f), 1.0f);
  EXPECT_EQ(fast_exp2(-3.0f), 0.125f);
}

}  // namespace
}  // namespace seqrt::cpu::HWY_NAMESPACE
