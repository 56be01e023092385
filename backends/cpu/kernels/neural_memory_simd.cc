// Vectorised activation of seqrt::NeuralMemory's memory MLP: GELU (erf) or
// SiLU with its derivative in one pass, compiled per target by Highway and
// dispatched at run time (pattern of backends/cpu/simd/vec.cc).
//
// Highway 1.0.3 has no erf, so GELU uses Abramowitz & Stegun 7.1.26
// (|error| <= 1.5e-7 on erf, below f32 rounding of the results), and the
// e^(−x²/2) it needs is also the normal density in the derivative. The exps
// are FastExp (backends/cpu/simd/fast_exp-inl.h, ~2 ulp): the activations
// are a tenth of the chunked form's time. Its clamp turns e^(−x²/2) for
// |x| > 13.2 into ≈1e-38 instead of 0, far below f32 resolution of erf.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/neural_memory_simd.cc"
#include <hwy/foreach_target.h>
#include <hwy/highway.h>
// clang-format on

#include "backends/cpu/kernels/neural_memory.h"
#include "backends/cpu/simd/fast_exp-inl.h"

HWY_BEFORE_NAMESPACE();
namespace seqrt::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;

template <class V>
HWY_INLINE void Gelu(D d, V x, V& act, V& deriv) {
  const V one = hn::Set(d, 1.0f);
  const V half = hn::Set(d, 0.5f);
  const V z = hn::Mul(hn::Abs(x), hn::Set(d, 0.70710678118654752f));
  const V t = hn::Div(one, hn::MulAdd(hn::Set(d, 0.3275911f), z, one));
  V poly = hn::Set(d, 1.061405429f);
  poly = hn::MulAdd(poly, t, hn::Set(d, -1.453152027f));
  poly = hn::MulAdd(poly, t, hn::Set(d, 1.421413741f));
  poly = hn::MulAdd(poly, t, hn::Set(d, -0.284496736f));
  poly = hn::MulAdd(poly, t, hn::Set(d, 0.254829592f));
  poly = hn::Mul(poly, t);
  const V gauss = FastExp(d, hn::Neg(hn::Mul(z, z)));  // e^(−x²/2)
  const V erf_abs = hn::NegMulAdd(poly, gauss, one);
  const V erf = hn::CopySign(erf_abs, x);
  const V cdf = hn::Mul(half, hn::Add(one, erf));
  act = hn::Mul(x, cdf);
  deriv = hn::MulAdd(hn::Mul(x, hn::Set(d, 0.39894228040143268f)), gauss, cdf);
}

template <class V>
HWY_INLINE void Silu(D d, V x, V& act, V& deriv) {
  const V one = hn::Set(d, 1.0f);
  // FastExp clamps exp(−x) to e^88 below x = −88, so σ ≈ 6e-39 there.
  const V sigmoid = hn::Div(one, hn::Add(one, FastExp(d, hn::Neg(x))));
  act = hn::Mul(x, sigmoid);
  deriv = hn::Mul(sigmoid, hn::MulAdd(x, hn::Sub(one, sigmoid), one));
}

void ActivationImpl(const float* x, float* act, float* deriv, int64_t count,
                    bool gelu) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= count; i += lanes) {
    auto v = hn::LoadU(d, x + i);
    decltype(v) a, g;
    if (gelu) {
      Gelu(d, v, a, g);
    } else {
      Silu(d, v, a, g);
    }
    hn::StoreU(a, d, act + i);
    hn::StoreU(g, d, deriv + i);
  }
  for (; i < count; ++i) {
    act[i] = nm_activation(x[i], gelu);
    deriv[i] = nm_activation_derivative(x[i], gelu);
  }
}

}  // namespace seqrt::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace seqrt::cpu {

HWY_EXPORT(ActivationImpl);

void neural_memory_activation(const float* x, float* act, float* deriv,
                              int64_t count, bool gelu) {
  HWY_DYNAMIC_DISPATCH(ActivationImpl)(x, act, deriv, count, gelu);
}

}  // namespace seqrt::cpu
#endif  // HWY_ONCE
