// Highway's dynamic dispatch (pattern of backends/cpu/simd/vec.cc): compiled
// once per target, the best one picked at run time.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/attention_simd.cc"
#include <hwy/foreach_target.h>
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>
// clang-format on

#include <cmath>

#include "backends/cpu/kernels/attention_simd.h"

HWY_BEFORE_NAMESPACE();
namespace seqrt::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void SoftcapImpl(float* x, size_t n, float cap) {
  const hn::ScalableTag<float> d;
  const size_t lanes = hn::Lanes(d);
  const auto vcap = hn::Set(d, cap);
  const auto vinv = hn::Set(d, 1.0f / cap);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    auto t = hn::Tanh(d, hn::Mul(hn::LoadU(d, x + i), vinv));
    hn::StoreU(hn::Mul(vcap, t), d, x + i);
  }
  for (; i < n; ++i) x[i] = cap * std::tanh(x[i] / cap);
}

}  // namespace seqrt::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace seqrt::cpu {

HWY_EXPORT(SoftcapImpl);

void softcap_inplace(float* x, size_t n, float cap) {
  HWY_DYNAMIC_DISPATCH(SoftcapImpl)(x, n, cap);
}

}  // namespace seqrt::cpu
#endif  // HWY_ONCE
