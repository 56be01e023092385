// Highway's dynamic dispatch (pattern of simd/vec.cc): compiled once per
// target, HWY_DYNAMIC_DISPATCH picks the best at run time.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/scan_simd.cc"
#include <hwy/foreach_target.h>
#include <hwy/highway.h>
#include "backends/cpu/simd/fast_exp-inl.h"
// clang-format on

#include <algorithm>
#include <cmath>

#include "backends/cpu/kernels/scan_simd.h"

HWY_BEFORE_NAMESPACE();
namespace seqrt::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;

// State vectors per pass of ChannelPass: each pass re-reads Δ, Δ·u and y
// once per step, so wider passes read less; 4 fits AVX2's 16 registers.
constexpr int kChannelPassWidth = 4;

size_t ScanLanesImpl() { return hn::Lanes(D()); }

// Mamba's softplus, log1p(e^x) up to 20 and x beyond, as
// max(x, 0) + log1p(e^-|x|): e^-|x| in (0, 1] by FastExp, and log1p(w) =
// s·P(s²) with s = w/(2 + w) in [0, 1/3] and P a degree-4 minimax fit
// (Chebyshev, mpmath) of log((1+s)/(1-s))/s. Relative error ≤ 5e-7 (FastExp's
// 2.5e-7 plus 2.2e-7), against ~30 operations more for hn::Log1p(hn::Exp).
template <class V>
HWY_INLINE V MambaSoftplus(D d, V x) {
  const V w = FastExp(d, hn::Neg(hn::Abs(x)));
  const V s = hn::Div(w, hn::Add(w, hn::Set(d, 2.0f)));
  const V z = hn::Mul(s, s);
  V p = hn::Set(d, 2.815777957e-01f);
  p = hn::MulAdd(p, z, hn::Set(d, 2.796515822e-01f));
  p = hn::MulAdd(p, z, hn::Set(d, 4.002459645e-01f));
  p = hn::MulAdd(p, z, hn::Set(d, 6.666632295e-01f));
  p = hn::MulAdd(p, z, hn::Set(d, 2.0f));
  const V soft = hn::MulAdd(s, p, hn::Max(x, hn::Zero(d)));
  return hn::IfThenElse(hn::Le(x, hn::Set(d, 20.0f)), soft, x);
}

void DeltaRowImpl(const float* x, float bias, bool softplus, float lo, float hi,
                  float* out, size_t n) {
  const D d;
  const size_t lanes = hn::Lanes(d);
  const auto vbias = hn::Set(d, bias);
  const auto vlo = hn::Set(d, lo);
  const auto vhi = hn::Set(d, hi);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    auto v = hn::Add(hn::LoadU(d, x + i), vbias);
    if (softplus) v = MambaSoftplus(d, v);
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
  for (int k = 0; k < K; ++k) h[k] = hn::LoadU(d, r.h + j + k * lanes);
  const float* b = r.b + j;
  const float* c = r.c + j;
  for (size_t t = 0; t < r.length; ++t) {
    const auto vdx =
        hn::Set(d, r.dt[t] * r.x[static_cast<ptrdiff_t>(t) * r.x_stride]);
    const auto decay = hn::Set(d, r.decay[t]);
    auto acc = hn::Zero(d);
    for (int k = 0; k < K; ++k) {
      h[k] = hn::MulAdd(decay, h[k], hn::Mul(vdx, hn::LoadU(d, b + k * lanes)));
      acc = hn::MulAdd(h[k], hn::LoadU(d, c + k * lanes), acc);
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

// 8×8 transpose: rows in[r·in_stride ..] to columns out[c·out_stride ..].
// Three rounds of interleaves, on AVX2 only (8 lanes in two 128-bit
// blocks); other targets move elements one by one.
#if HWY_TARGET == HWY_AVX2
HWY_INLINE void Transpose8(const float* const* in, size_t offset, float* out,
                           size_t out_stride) {
  const hn::Full256<float> d;
  const hn::Repartition<double, decltype(d)> dd;
  using V = hn::Vec<decltype(d)>;
  V r[8], u[8];
  for (int i = 0; i < 8; ++i) r[i] = hn::LoadU(d, in[i] + offset);
  for (int i = 0; i < 8; i += 2) {
    u[i] = hn::InterleaveLower(d, r[i], r[i + 1]);
    u[i + 1] = hn::InterleaveUpper(d, r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    for (int j = 0; j < 2; ++j) {
      const auto lo = hn::BitCast(dd, u[i + j]);
      const auto hi = hn::BitCast(dd, u[i + j + 2]);
      r[i + 2 * j] = hn::BitCast(d, hn::InterleaveLower(dd, lo, hi));
      r[i + 2 * j + 1] = hn::BitCast(d, hn::InterleaveUpper(dd, lo, hi));
    }
  }
  // r[0..3]: columns 0,1,2,3 (rows 0-3) | columns 4,5,6,7; r[4..7] likewise
  // for rows 4-7.
  for (int c = 0; c < 4; ++c) {
    hn::StoreU(hn::ConcatLowerLower(d, r[c + 4], r[c]), d,
               out + c * out_stride);
    hn::StoreU(hn::ConcatUpperUpper(d, r[c + 4], r[c]), d,
               out + (c + 4) * out_stride);
  }
}
#endif

void RowsToBlockImpl(const float* const* rows, size_t len, float* block) {
  const size_t lanes = hn::Lanes(D());
  size_t t = 0;
#if HWY_TARGET == HWY_AVX2
  if (lanes == 8) {
    for (; t + 8 <= len; t += 8) Transpose8(rows, t, block + t * 8, 8);
  }
#endif
  for (; t < len; ++t) {
    for (size_t i = 0; i < lanes; ++i) block[t * lanes + i] = rows[i][t];
  }
}

void BlockToRowsImpl(const float* block, size_t len, float* const* rows) {
  const size_t lanes = hn::Lanes(D());
  size_t t = 0;
#if HWY_TARGET == HWY_AVX2
  if (lanes == 8) {
    const float* in[8];
    float tile[64];
    for (; t + 8 <= len; t += 8) {
      for (int i = 0; i < 8; ++i) in[i] = block + (t + i) * 8;
      Transpose8(in, 0, tile, 8);
      for (int i = 0; i < 8; ++i) std::copy_n(tile + i * 8, 8, rows[i] + t);
    }
  }
#endif
  for (; t < len; ++t) {
    for (size_t i = 0; i < lanes; ++i) rows[i][t] = block[t * lanes + i];
  }
}

void DeltaBlockImpl(float* dt, const float* bias, bool softplus, const float* u,
                    float* dtx, size_t len) {
  const D d;
  const size_t lanes = hn::Lanes(d);
  const auto vbias = hn::LoadU(d, bias);
  for (size_t t = 0; t < len; ++t) {
    auto v = hn::Add(hn::Load(d, dt + t * lanes), vbias);
    if (softplus) v = MambaSoftplus(d, v);
    hn::Store(v, d, dt + t * lanes);
    hn::Store(hn::Mul(v, hn::Load(d, u + t * lanes)), d, dtx + t * lanes);
  }
}

// K state vectors (n = j .. j+K-1, each across the block's channels) in
// registers for the whole stretch; adds their Σ h·c into y (or writes it on
// the first pass). The decays of the stretch are computed first, in a loop
// whose steps are independent (so the exp's long dependency chain overlaps
// across steps), into L1 scratch that the recurrence then reads: fused, the
// exp chains and the h chains together overflowed the registers and the
// out-of-order window (measured 1.4× slower). The exp argument Δ·A is ≤ 0
// in any stable model; the clamp in FastExp2 keeps other inputs finite.
template <int K>
HWY_INLINE void ChannelPass(const ChannelScan& s, size_t j, bool first) {
  const D d;
  const size_t lanes = hn::Lanes(d);
  using V = hn::Vec<D>;
  const float* a2 = s.a2 + j * lanes;
  float* decay = s.decay;
  for (size_t t = 0; t < s.length; ++t) {
    const V dt = hn::Load(d, s.dt + t * lanes);
    for (int k = 0; k < K; ++k) {
      hn::Store(FastExp2(d, hn::Mul(dt, hn::Load(d, a2 + k * lanes))), d,
                decay + (t * K + k) * lanes);
    }
  }
  V h[K];
  for (int k = 0; k < K; ++k) h[k] = hn::Load(d, s.h + (j + k) * lanes);
  const float* b = s.b + j;
  const float* c = s.c + j;
  for (size_t t = 0; t < s.length; ++t) {
    const V dtx = hn::Load(d, s.dtx + t * lanes);
    float* y = s.y + t * lanes;
    V acc = first ? hn::Zero(d) : hn::Load(d, y);
    for (int k = 0; k < K; ++k) {
      const V e = hn::Load(d, decay + (t * K + k) * lanes);
      h[k] = hn::MulAdd(e, h[k], hn::Mul(dtx, hn::Set(d, b[k])));
      acc = hn::MulAdd(h[k], hn::Set(d, c[k]), acc);
    }
    hn::Store(acc, d, y);
    b += s.bc_stride;
    c += s.bc_stride;
  }
  for (int k = 0; k < K; ++k) hn::Store(h[k], d, s.h + (j + k) * lanes);
}

size_t ChannelScanDecayFloatsImpl(size_t length) {
  return length * kChannelPassWidth * hn::Lanes(D());
}

void ScanChannelsImpl(const ChannelScan& s) {
  if (s.n == 0) {
    std::fill(s.y, s.y + s.length * hn::Lanes(D()), 0.0f);
    return;
  }
  size_t j = 0;
  while (j < s.n) {
    const size_t left = s.n - j;
    const bool first = j == 0;
    if (left >= kChannelPassWidth) {
      ChannelPass<kChannelPassWidth>(s, j, first);
      j += kChannelPassWidth;
    } else if (left >= 2) {
      ChannelPass<2>(s, j, first);
      j += 2;
    } else {
      ChannelPass<1>(s, j, first);
      j += 1;
    }
  }
}

void DecayMaskRowImpl(const float* in, const float* cs, const float* dt,
                      float cs_l, size_t count, float* out) {
  const D d;
  const size_t lanes = hn::Lanes(d);
  const auto vcs = hn::Set(d, cs_l);
  const auto zero = hn::Zero(d);
  size_t k = 0;
  for (; k + lanes <= count; k += lanes) {
    const auto e =
        FastExp(d, hn::Min(hn::Sub(vcs, hn::LoadU(d, cs + k)), zero));
    hn::StoreU(hn::Mul(hn::LoadU(d, in + k), hn::Mul(e, hn::LoadU(d, dt + k))),
               d, out + k);
  }
  if (k < count) {
    // Masked lanes read nothing and are not written.
    const auto m = hn::FirstN(d, count - k);
    const auto e =
        FastExp(d, hn::Min(hn::Sub(vcs, hn::MaskedLoad(m, d, cs + k)), zero));
    const auto v = hn::Mul(hn::MaskedLoad(m, d, in + k),
                           hn::Mul(e, hn::MaskedLoad(m, d, dt + k)));
    hn::BlendedStore(v, m, d, out + k);
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
      // z·σ(z) = z / (1 + e^-z); FastExp's clamp keeps e^-z finite, so
      // z << 0 gives ~z·e^z, never NaN.
      const auto vz = hn::LoadU(d, z + i);
      v = hn::Mul(v, hn::Div(vz, hn::Add(one, FastExp(d, hn::Neg(vz)))));
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
HWY_EXPORT(ScanChannelsImpl);
HWY_EXPORT(ChannelScanDecayFloatsImpl);
HWY_EXPORT(RowsToBlockImpl);
HWY_EXPORT(BlockToRowsImpl);
HWY_EXPORT(DeltaBlockImpl);
HWY_EXPORT(DecayMaskRowImpl);
HWY_EXPORT(SkipAndGateImpl);

size_t scan_lanes() { return HWY_DYNAMIC_DISPATCH(ScanLanesImpl)(); }
void delta_row(const float* x, float bias, bool softplus, float lo, float hi,
               float* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(DeltaRowImpl)(x, bias, softplus, lo, hi, out, n);
}
void scan_row(const ScanRow& row) { HWY_DYNAMIC_DISPATCH(ScanRowImpl)(row); }
void scan_channels(const ChannelScan& scan) {
  HWY_DYNAMIC_DISPATCH(ScanChannelsImpl)(scan);
}
size_t channel_scan_decay_floats(size_t length) {
  return HWY_DYNAMIC_DISPATCH(ChannelScanDecayFloatsImpl)(length);
}
void rows_to_block(const float* const* rows, size_t len, float* block) {
  HWY_DYNAMIC_DISPATCH(RowsToBlockImpl)(rows, len, block);
}
void block_to_rows(const float* block, size_t len, float* const* rows) {
  HWY_DYNAMIC_DISPATCH(BlockToRowsImpl)(block, len, rows);
}
void delta_block(float* dt, const float* bias, bool softplus, const float* u,
                 float* dtx, size_t len) {
  HWY_DYNAMIC_DISPATCH(DeltaBlockImpl)(dt, bias, softplus, u, dtx, len);
}
void decay_mask_row(const float* in, const float* cs, const float* dt,
                    float cs_l, size_t count, float* out) {
  HWY_DYNAMIC_DISPATCH(DecayMaskRowImpl)(in, cs, dt, cs_l, count, out);
}
void skip_and_gate(float* y, const float* x, bool has_dskip, float dskip,
                   const float* z, size_t n) {
  HWY_DYNAMIC_DISPATCH(SkipAndGateImpl)(y, x, has_dskip, dskip, z, n);
}

}  // namespace seqrt::cpu
#endif  // HWY_ONCE
