// Fast vector exp for Highway-dispatched kernels of the CPU backend, where
// an exp per element dominates (the decays of the state-space scans). It is
// cheaper than hn::Exp (degree 5 instead of 7, one exponent insertion by an
// integer add instead of two multiplies, no special-case blend) at ~2 ulp.
//
// Use from a .cc compiled per target (foreach_target.h) after including
// <hwy/highway.h>:
//   #include "backends/cpu/simd/fast_exp-inl.h"
//   ... hn::Vec<D> e = FastExp(d, x);   // inside seqrt::cpu::HWY_NAMESPACE
//
// Both functions: f32 lanes only; inputs are clamped to the valid range
// first, so every input (±inf included; NaN excepted) gives a finite,
// positive, normal result. Max relative error, measured against the exact
// function at every float in the valid range's reduction interval:
// 2.6e-7 (about 2 ulp) for FastExp2, 2.5e-7 plus the Cody–Waite reduction
// error (< 1e-9) for FastExp. Below the range they return the smallest
// normal-range values (≈1.2e-38) instead of underflowing towards 0, an
// absolute error below 2^-125.
//
// Per-target include guard (Highway's -inl.h convention).
#if defined(SEQRT_CPU_SIMD_FAST_EXP_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SEQRT_CPU_SIMD_FAST_EXP_INL_H_
#undef SEQRT_CPU_SIMD_FAST_EXP_INL_H_
#else
#define SEQRT_CPU_SIMD_FAST_EXP_INL_H_
#endif

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace seqrt::cpu::HWY_NAMESPACE {
namespace fast_exp_detail {
namespace hn = hwy::HWY_NAMESPACE;

// Adding 1.5·2^23 to |x| < 2^22 rounds it to the nearest integer k and
// leaves k (two's complement) in the low mantissa bits of the sum.
constexpr float kRoundMagic = 12582912.0f;

// p·2^k for integer k in [-126, 127] held in the low bits of `rounded`
// (x + kRoundMagic) and p in [2^-0.5, 2^0.5]: k is added to p's exponent
// field. The result stays a normal float over that range of k.
template <class D, class V>
HWY_INLINE V Scale2K(D d, V p, V rounded) {
  const hn::RebindToSigned<D> di;
  const auto k_bits = hn::ShiftLeft<23>(hn::BitCast(di, rounded));
  return hn::BitCast(d, hn::Add(hn::BitCast(di, p), k_bits));
}

}  // namespace fast_exp_detail

// 2^x for x in [-126, 127] (clamped to it). The range reduction x = k + f,
// f in [-0.5, 0.5], is exact; 2^f = 1 + f·q(f) with q a degree-4 minimax
// fit (Chebyshev, mpmath), evaluated by Horner; so 2^0 = 1 exactly.
template <class D, class V>
HWY_INLINE V FastExp2(D d, V x) {
  namespace hn = hwy::HWY_NAMESPACE;
  using fast_exp_detail::kRoundMagic;
  x = hn::Min(hn::Max(x, hn::Set(d, -126.0f)), hn::Set(d, 127.0f));
  const V magic = hn::Set(d, kRoundMagic);
  const V rounded = hn::Add(x, magic);
  const V f = hn::Sub(x, hn::Sub(rounded, magic));
  V q = hn::Set(d, 1.338130212e-03f);
  q = hn::MulAdd(q, f, hn::Set(d, 9.666368365e-03f));
  q = hn::MulAdd(q, f, hn::Set(d, 5.550381169e-02f));
  q = hn::MulAdd(q, f, hn::Set(d, 2.402234972e-01f));
  q = hn::MulAdd(q, f, hn::Set(d, 6.931471825e-01f));
  const V p = hn::MulAdd(q, f, hn::Set(d, 1.0f));
  return fast_exp_detail::Scale2K(d, p, rounded);
}

// e^x for x in [-87.33, 88.0] (clamped to it; e^-87.33 ≈ 2^-126). Cody–Waite
// reduction x = k·ln2 + r with ln2 split in two parts, r in [-ln2/2, ln2/2];
// e^r = 1 + r·q(r) with q a degree-4 minimax fit; so e^0 = 1 exactly.
template <class D, class V>
HWY_INLINE V FastExp(D d, V x) {
  namespace hn = hwy::HWY_NAMESPACE;
  using fast_exp_detail::kRoundMagic;
  x = hn::Min(hn::Max(x, hn::Set(d, -87.33f)), hn::Set(d, 88.0f));
  const V magic = hn::Set(d, kRoundMagic);
  const V rounded = hn::MulAdd(x, hn::Set(d, 1.44269504089f), magic);
  const V k = hn::Sub(rounded, magic);
  // ln2 = 0.693145751953125 (exact in 16 bits, so k·hi is exact) + 1.4286e-6.
  V r = hn::NegMulAdd(k, hn::Set(d, 0.693145751953125f), x);
  r = hn::NegMulAdd(k, hn::Set(d, 1.428606820309417e-06f), r);
  V q = hn::Set(d, 8.363173343e-03f);
  q = hn::MulAdd(q, r, hn::Set(d, 4.187564552e-02f));
  q = hn::MulAdd(q, r, hn::Set(d, 1.666657776e-01f));
  q = hn::MulAdd(q, r, hn::Set(d, 4.999937117e-01f));
  q = hn::MulAdd(q, r, hn::Set(d, 1.000000000e+00f));
  const V p = hn::MulAdd(q, r, hn::Set(d, 1.0f));
  return fast_exp_detail::Scale2K(d, p, rounded);
}

}  // namespace seqrt::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SEQRT_CPU_SIMD_FAST_EXP_INL_H_
