// Highway's dynamic dispatch: this file is compiled once per target by
// foreach_target.h, and HWY_DYNAMIC_DISPATCH picks the best at run time.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/linear_attention_simd.cc"
#include <hwy/foreach_target.h>
#include <hwy/highway.h>
// clang-format on

#include "backends/cpu/kernels/linear_attention_simd.h"

HWY_BEFORE_NAMESPACE();
namespace seqrt::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;

void DecayAndReadKeysImpl(const float* row_decay, float decay, const float* k,
                          int64_t dk, int64_t dv, float* state, float* u) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t j = 0; j < dv; ++j) u[j] = 0.0f;
  for (int64_t i = 0; i < dk; ++i) {
    const float a = row_decay ? row_decay[i] : decay;
    const auto va = hn::Set(d, a);
    const auto vk = hn::Set(d, k[i]);
    float* row = state + i * dv;
    int64_t j = 0;
    for (; j + lanes <= dv; j += lanes) {
      auto s = hn::Mul(va, hn::LoadU(d, row + j));
      hn::StoreU(s, d, row + j);
      hn::StoreU(hn::MulAdd(vk, s, hn::LoadU(d, u + j)), d, u + j);
    }
    for (; j < dv; ++j) {
      row[j] *= a;
      u[j] += k[i] * row[j];
    }
  }
}

void DecayUpdateReadImpl(const float* row_decay, float decay, const float* k,
                         const float* w, const float* q, float alpha,
                         int64_t dk, int64_t dv, float* state, float* y) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t j = 0; j < dv; ++j) y[j] = 0.0f;
  for (int64_t i = 0; i < dk; ++i) {
    const float a = row_decay ? row_decay[i] : decay;
    const float qi = alpha * q[i];
    const auto va = hn::Set(d, a);
    const auto vk = hn::Set(d, k[i]);
    const auto vq = hn::Set(d, qi);
    float* row = state + i * dv;
    int64_t j = 0;
    for (; j + lanes <= dv; j += lanes) {
      auto s = hn::MulAdd(vk, hn::LoadU(d, w + j),
                          hn::Mul(va, hn::LoadU(d, row + j)));
      hn::StoreU(s, d, row + j);
      hn::StoreU(hn::MulAdd(vq, s, hn::LoadU(d, y + j)), d, y + j);
    }
    for (; j < dv; ++j) {
      row[j] = a * row[j] + k[i] * w[j];
      y[j] += qi * row[j];
    }
  }
}

}  // namespace seqrt::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace seqrt::cpu {

HWY_EXPORT(DecayAndReadKeysImpl);
HWY_EXPORT(DecayUpdateReadImpl);

void decay_and_read_keys(const float* row_decay, float decay, const float* k,
                         int64_t dk, int64_t dv, float* state, float* u) {
  HWY_DYNAMIC_DISPATCH(DecayAndReadKeysImpl)
  (row_decay, decay, k, dk, dv, state, u);
}

void decay_update_read(const float* row_decay, float decay, const float* k,
                       const float* w, const float* q, float alpha, int64_t dk,
                       int64_t dv, float* state, float* y) {
  HWY_DYNAMIC_DISPATCH(DecayUpdateReadImpl)
  (row_decay, decay, k, w, q, alpha, dk, dv, state, y);
}

}  // namespace seqrt::cpu
#endif  // HWY_ONCE
