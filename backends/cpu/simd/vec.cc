// Highway's dynamic dispatch: this file is compiled once per target by
// foreach_target.h, and HWY_DYNAMIC_DISPATCH picks the best at run time.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd/vec.cc"
#include <hwy/foreach_target.h>
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>
// clang-format on

#include <cmath>
#include <limits>

#include "backends/cpu/simd/vec.h"

HWY_BEFORE_NAMESPACE();
namespace seqrt::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;

float DotImpl(const float* a, const float* b, size_t n) {
  const D d;
  const size_t lanes = hn::Lanes(d);
  auto sum0 = hn::Zero(d);
  auto sum1 = hn::Zero(d);
  size_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    sum0 = hn::MulAdd(hn::LoadU(d, a + i), hn::LoadU(d, b + i), sum0);
    sum1 = hn::MulAdd(hn::LoadU(d, a + i + lanes), hn::LoadU(d, b + i + lanes),
                      sum1);
  }
  for (; i + lanes <= n; i += lanes) {
    sum0 = hn::MulAdd(hn::LoadU(d, a + i), hn::LoadU(d, b + i), sum0);
  }
  float sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(sum0, sum1)));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

void AxpyImpl(float alpha, const float* x, float* y, size_t n) {
  const D d;
  const size_t lanes = hn::Lanes(d);
  const auto va = hn::Set(d, alpha);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(hn::MulAdd(va, hn::LoadU(d, x + i), hn::LoadU(d, y + i)), d,
               y + i);
  }
  for (; i < n; ++i) y[i] += alpha * x[i];
}

void ScaleImpl(float alpha, float* x, size_t n) {
  const D d;
  const size_t lanes = hn::Lanes(d);
  const auto va = hn::Set(d, alpha);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(hn::Mul(va, hn::LoadU(d, x + i)), d, x + i);
  }
  for (; i < n; ++i) x[i] *= alpha;
}

float MaxImpl(const float* x, size_t n) {
  const D d;
  const size_t lanes = hn::Lanes(d);
  float result = -std::numeric_limits<float>::infinity();
  auto vmax = hn::Set(d, result);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) vmax = hn::Max(vmax, hn::LoadU(d, x + i));
  result = hn::GetLane(hn::MaxOfLanes(d, vmax));
  for (; i < n; ++i) result = std::max(result, x[i]);
  return result;
}

float ExpShiftedSumImpl(float* x, size_t n, float shift) {
  const D d;
  const size_t lanes = hn::Lanes(d);
  const auto vshift = hn::Set(d, shift);
  auto vsum = hn::Zero(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    auto e = hn::Exp(d, hn::Sub(hn::LoadU(d, x + i), vshift));
    hn::StoreU(e, d, x + i);
    vsum = hn::Add(vsum, e);
  }
  float sum = hn::GetLane(hn::SumOfLanes(d, vsum));
  for (; i < n; ++i) {
    x[i] = std::exp(x[i] - shift);
    sum += x[i];
  }
  return sum;
}

void ExpImpl(float* x, size_t n) {
  const D d;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(hn::Exp(d, hn::LoadU(d, x + i)), d, x + i);
  }
  for (; i < n; ++i) x[i] = std::exp(x[i]);
}

// sigmoid(x) = 1 / (1 + exp(-x)); exp overflows to inf for x << 0, which
// gives exactly 0, never NaN.
template <class V>
HWY_INLINE V Sigmoid(D d, V x) {
  return hn::Div(hn::Set(d, 1.0f),
                 hn::Add(hn::Set(d, 1.0f), hn::Exp(d, hn::Neg(x))));
}

void SigmoidImpl(float* x, size_t n) {
  const D d;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(Sigmoid(d, hn::LoadU(d, x + i)), d, x + i);
  }
  for (; i < n; ++i) x[i] = 1.0f / (1.0f + std::exp(-x[i]));
}

void TanhImpl(float* x, size_t n) {
  const D d;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(hn::Tanh(d, hn::LoadU(d, x + i)), d, x + i);
  }
  for (; i < n; ++i) x[i] = std::tanh(x[i]);
}

void SiluImpl(float* x, size_t n) {
  const D d;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    auto v = hn::LoadU(d, x + i);
    hn::StoreU(hn::Mul(v, Sigmoid(d, v)), d, x + i);
  }
  for (; i < n; ++i) x[i] = x[i] / (1.0f + std::exp(-x[i]));
}

}  // namespace seqrt::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace seqrt::cpu {

HWY_EXPORT(DotImpl);
HWY_EXPORT(AxpyImpl);
HWY_EXPORT(ScaleImpl);
HWY_EXPORT(MaxImpl);
HWY_EXPORT(ExpShiftedSumImpl);
HWY_EXPORT(ExpImpl);
HWY_EXPORT(SigmoidImpl);
HWY_EXPORT(TanhImpl);
HWY_EXPORT(SiluImpl);

float dot(const float* a, const float* b, size_t n) {
  return HWY_DYNAMIC_DISPATCH(DotImpl)(a, b, n);
}
void axpy(float alpha, const float* x, float* y, size_t n) {
  HWY_DYNAMIC_DISPATCH(AxpyImpl)(alpha, x, y, n);
}
void scale(float alpha, float* x, size_t n) {
  HWY_DYNAMIC_DISPATCH(ScaleImpl)(alpha, x, n);
}
float max_value(const float* x, size_t n) {
  return HWY_DYNAMIC_DISPATCH(MaxImpl)(x, n);
}
float exp_shifted_sum(float* x, size_t n, float shift) {
  return HWY_DYNAMIC_DISPATCH(ExpShiftedSumImpl)(x, n, shift);
}
void exp_inplace(float* x, size_t n) { HWY_DYNAMIC_DISPATCH(ExpImpl)(x, n); }
void sigmoid_inplace(float* x, size_t n) {
  HWY_DYNAMIC_DISPATCH(SigmoidImpl)(x, n);
}
void tanh_inplace(float* x, size_t n) { HWY_DYNAMIC_DISPATCH(TanhImpl)(x, n); }
void silu_inplace(float* x, size_t n) { HWY_DYNAMIC_DISPATCH(SiluImpl)(x, n); }

}  // namespace seqrt::cpu
#endif  // HWY_ONCE
