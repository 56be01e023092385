// Highway's dynamic dispatch (pattern of simd/vec.cc): compiled once per
// target, HWY_DYNAMIC_DISPATCH picks the best at run time.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/scan_simd.cc"
#include <hwy/foreach_target.h>
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>
// clang-format on

#include <algorithm>
#include <cmath>

#include "backends/cpu/kernels/scan_simd.h"

HWY_BEFORE_NAMESPACE();
namespace seqrt::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;

size_t ScanLanesImpl() { return hn::Lanes(D()); }

void DeltaRowImpl(const float* x, float bias, bool softplus, float lo, float hi,
                  float* out, size_t n) {
  const D d;
  const size_t lanes = hn::Lanes(d);
  const auto vbias = hn::Set(d, bias);
  const auto vlo = hn::Set(d, lo);
  const auto vhi = hn::Set(d, hi);
  const auto threshold = hn::Set(d, 20.0f);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    auto v = hn::Add(hn::LoadU(d, x + i), vbias);
    if (softplus) {
      // Above 20 the exp would only lose precision; pass x through.
      v = hn::IfThenElse(hn::Le(v, threshold), hn::Log1p(d, hn::Exp(d, v)), v);
    }
    hn::StoreU(hn::Min(hn::Max(v, vlo), vhi), d, out + i);
  }
  for (; i < n; ++i) {
    float v = x[i] + bias;
    if (softplus) v = v <= 20.0f ? std::log1p(std::exp(v)) : v;
    out[i] = std::min(std::max(v, lo), hi);
  }
}

// K vectors of the state, starting at n offset `j`, kept in registers for
// the whole pass over time; adds Σ h·c of these lanes into y (or writes it
// on the first pass).
template <int K>
HWY_INLINE void ScanPass(const ScanRow& r, size_t j, bool first) {
  const D d;
  const size_t lanes = hn::Lanes(d);
  using V = hn::Vec<D>;
  V h[K];
  V a[K];
  for (int k = 0; k < K; ++k) {
    h[k] = hn::LoadU(d, r.h + j + k * lanes);
    a[k] = r.a ? hn::LoadU(d, r.a + j + k * lanes) : hn::Zero(d);
  }
  const float* b = r.b + j;
  const float* c = r.c + j;
  for (size_t t = 0; t < r.length; ++t) {
    const float dt = r.dt[t];
    const auto vdx =
        hn::Set(d, dt * r.x[static_cast<ptrdiff_t>(t) * r.x_stride]);
    auto acc = hn::Zero(d);
    if (r.a) {
      const auto vdt = hn::Set(d, dt);
      for (int k = 0; k < K; ++k) {
        const auto decay = hn::Exp(d, hn::Mul(vdt, a[k]));
        h[k] =
            hn::MulAdd(decay, h[k], hn::Mul(vdx, hn::LoadU(d, b + k * lanes)));
        acc = hn::MulAdd(h[k], hn::LoadU(d, c + k * lanes), acc);
      }
    } else {
      const auto decay = hn::Set(d, r.decay[t]);
      for (int k = 0; k < K; ++k) {
        h[k] =
            hn::MulAdd(decay, h[k], hn::Mul(vdx, hn::LoadU(d, b + k * lanes)));
        acc = hn::MulAdd(h[k], hn::LoadU(d, c + k * lanes), acc);
      }
    }
    float* y = r.y + static_cast<ptrdiff_t>(t) * r.y_stride;
    const float sum = hn::GetLane(hn::SumOfLanes(d, acc));
    *y = first ? sum : *y + sum;
    b += r.bc_stride;
    c += r.bc_stride;
  }
  for (int k = 0; k < K; ++k) hn::StoreU(h[k], d, r.h + j + k * lanes);
}

void ScanRowImpl(const ScanRow& row) {
  const size_t lanes = hn::Lanes(D());
  const size_t blocks = row.padded_n / lanes;
  if (blocks == 0) {
    for (size_t t = 0; t < row.length; ++t) {
      row.y[static_cast<ptrdiff_t>(t) * row.y_stride] = 0.0f;
    }
    return;
  }
  size_t block = 0;
  while (block < blocks) {
    const size_t left = blocks - block;
    const bool first = block == 0;
    if (left >= 4) {
      ScanPass<4>(row, block * lanes, first);
      block += 4;
    } else if (left == 3) {
      ScanPass<3>(row, block * lanes, first);
      block += 3;
    } else if (left == 2) {
      ScanPass<2>(row, block * lanes, first);
      block += 2;
    } else {
      ScanPass<1>(row, block * lanes, first);
      block += 1;
    }
  }
}

void SkipAndGateImpl(float* y, const float* x, bool has_dskip, float dskip,
                     const float* z, size_t n) {
  const D d;
  const size_t lanes = hn::Lanes(d);
  const auto vd = hn::Set(d, has_dskip ? dskip : 0.0f);
  const auto one = hn::Set(d, 1.0f);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    auto v = hn::MulAdd(vd, hn::LoadU(d, x + i), hn::LoadU(d, y + i));
    if (z) {
      // z·σ(z) = z / (1 + e^-z): exp overflows to inf for z << 0, giving
      // exactly 0, never NaN.
      const auto vz = hn::LoadU(d, z + i);
      v = hn::Mul(v, hn::Div(vz, hn::Add(one, hn::Exp(d, hn::Neg(vz)))));
    }
    hn::StoreU(v, d, y + i);
  }
  for (; i < n; ++i) {
    float v = y[i] + (has_dskip ? dskip : 0.0f) * x[i];
    if (z) v *= z[i] / (1.0f + std::exp(-z[i]));
    y[i] = v;
  }
}

}  // namespace seqrt::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace seqrt::cpu {

HWY_EXPORT(ScanLanesImpl);
HWY_EXPORT(DeltaRowImpl);
HWY_EXPORT(ScanRowImpl);
HWY_EXPORT(SkipAndGateImpl);

size_t scan_lanes() { return HWY_DYNAMIC_DISPATCH(ScanLanesImpl)(); }
void delta_row(const float* x, float bias, bool softplus, float lo, float hi,
               float* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(DeltaRowImpl)(x, bias, softplus, lo, hi, out, n);
}
void scan_row(const ScanRow& row) { HWY_DYNAMIC_DISPATCH(ScanRowImpl)(row); }
void skip_and_gate(float* y, const float* x, bool has_dskip, float dskip,
                   const float* z, size_t n) {
  HWY_DYNAMIC_DISPATCH(SkipAndGateImpl)(y, x, has_dskip, dskip, z, n);
}

}  // namespace seqrt::cpu
#endif  // HWY_ONCE
