// Highway's dynamic dispatch, as in ../simd/vec.cc: compiled once per target
// by foreach_target.h; HWY_DYNAMIC_DISPATCH picks the best one at run time.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/elementwise_simd.cc"
#include <hwy/foreach_target.h>
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>
// clang-format on

#include <cmath>
#include <limits>

#include "backends/cpu/kernels/elementwise_simd.h"

HWY_BEFORE_NAMESPACE();
namespace seqrt::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

// Every loop runs whole vectors, then the tail through the same vector
// code, so an element's result does not depend on where it falls.
template <class Fn>
HWY_INLINE void for_each_block(size_t n, Fn&& fn) {
  const D d;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) fn(i, lanes);
  if (i < n) fn(i, n - i);
}

// Highway 1.0 has no partial loads: a tail goes through a zero-padded
// buffer of one vector.
constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);

HWY_INLINE V load(const float* p, size_t count) {
  const D d;
  if (count == hn::Lanes(d)) return hn::LoadU(d, p);
  HWY_ALIGN float buffer[kMaxLanes] = {};
  for (size_t i = 0; i < count; ++i) buffer[i] = p[i];
  return hn::Load(d, buffer);
}

HWY_INLINE void store(V v, float* p, size_t count) {
  const D d;
  if (count == hn::Lanes(d)) {
    hn::StoreU(v, d, p);
    return;
  }
  HWY_ALIGN float buffer[kMaxLanes] = {};
  hn::Store(v, d, buffer);
  for (size_t i = 0; i < count; ++i) p[i] = buffer[i];
}

// a or b broadcast: a step of 0 repeats element 0.
HWY_INLINE V load_step(const float* p, size_t step, size_t i, size_t count) {
  const D d;
  return step == 0 ? hn::Set(d, p[0]) : load(p + i, count);
}

HWY_INLINE V nan_if_either(V a, V b, V result) {
  const D d;
  auto either = hn::Or(hn::IsNaN(a), hn::IsNaN(b));
  return hn::IfThenElse(
      either, hn::Set(d, std::numeric_limits<float>::quiet_NaN()), result);
}

template <BinaryKind kKind>
HWY_INLINE V binary_op(V a, V b) {
  if constexpr (kKind == BinaryKind::kAdd) return hn::Add(a, b);
  if constexpr (kKind == BinaryKind::kSub) return hn::Sub(a, b);
  if constexpr (kKind == BinaryKind::kMul) return hn::Mul(a, b);
  if constexpr (kKind == BinaryKind::kDiv) return hn::Div(a, b);
  if constexpr (kKind == BinaryKind::kMax) {
    return nan_if_either(a, b, hn::IfThenElse(hn::Gt(a, b), a, b));
  }
  if constexpr (kKind == BinaryKind::kMin) {
    return nan_if_either(a, b, hn::IfThenElse(hn::Lt(a, b), a, b));
  }
}

template <BinaryKind kKind>
void binary_loop(const float* a, size_t a_step, const float* b, size_t b_step,
                 float* out, size_t n) {
  for_each_block(n, [&](size_t i, size_t count) {
    V va = load_step(a, a_step, i, count);
    V vb = load_step(b, b_step, i, count);
    store(binary_op<kKind>(va, vb), out + i, count);
  });
}

void BinaryImpl(BinaryKind kind, const float* a, size_t a_step, const float* b,
                size_t b_step, float* out, size_t n) {
  switch (kind) {
    case BinaryKind::kAdd:
      return binary_loop<BinaryKind::kAdd>(a, a_step, b, b_step, out, n);
    case BinaryKind::kSub:
      return binary_loop<BinaryKind::kSub>(a, a_step, b, b_step, out, n);
    case BinaryKind::kMul:
      return binary_loop<BinaryKind::kMul>(a, a_step, b, b_step, out, n);
    case BinaryKind::kDiv:
      return binary_loop<BinaryKind::kDiv>(a, a_step, b, b_step, out, n);
    case BinaryKind::kMax:
      return binary_loop<BinaryKind::kMax>(a, a_step, b, b_step, out, n);
    case BinaryKind::kMin:
      return binary_loop<BinaryKind::kMin>(a, a_step, b, b_step, out, n);
  }
}

// exp with IEEE edges: +inf above the f32 range, NaN kept (Highway's Exp
// is only specified below ~88.7).
HWY_INLINE V exp_safe(V x) {
  const D d;
  V e = hn::Exp(d, hn::Min(x, hn::Set(d, 88.0f)));
  e = hn::IfThenElse(hn::Gt(x, hn::Set(d, 88.72283f)),
                     hn::Set(d, std::numeric_limits<float>::infinity()), e);
  return hn::IfThenElse(hn::IsNaN(x), x, e);
}

// log with IEEE edges: -inf at 0, NaN below 0, +inf kept.
HWY_INLINE V log_safe(V x) {
  const D d;
  const V inf = hn::Set(d, std::numeric_limits<float>::infinity());
  V in_range = hn::IfThenElse(hn::Gt(x, hn::Zero(d)), x, hn::Set(d, 1.0f));
  V l = hn::Log(d, hn::Min(in_range, hn::Set(d, 3.4e38f)));
  l = hn::IfThenElse(hn::Eq(x, inf), inf, l);
  l = hn::IfThenElse(hn::Eq(x, hn::Zero(d)), hn::Neg(inf), l);
  V nan = hn::Set(d, std::numeric_limits<float>::quiet_NaN());
  return hn::IfThenElse(hn::Or(hn::Lt(x, hn::Zero(d)), hn::IsNaN(x)), nan, l);
}

// erfc(|z|) by the Chebyshev-fitted form t·exp(−z² + P(t)), t = 1/(1+|z|/2),
// whose relative error is below 1.2e-7 everywhere (Numerical Recipes
// §6.2); keeping erfc rather than 1 − erf keeps GELU's left tail accurate.
HWY_INLINE V erfc_abs(V z) {
  const D d;
  V a = hn::Abs(z);
  V t = hn::Div(hn::Set(d, 1.0f),
                hn::MulAdd(hn::Set(d, 0.5f), a, hn::Set(d, 1.0f)));
  const float c[] = {-1.26551223f, 1.00002368f, 0.37409196f,  0.09678418f,
                     -0.18628806f, 0.27886807f, -1.13520398f, 1.48851587f,
                     -0.82215223f, 0.17087277f};
  V p = hn::Set(d, c[9]);
  for (int k = 8; k >= 0; --k) p = hn::MulAdd(p, t, hn::Set(d, c[k]));
  return hn::Mul(t, hn::Exp(d, hn::Sub(p, hn::Mul(a, a))));
}

HWY_INLINE V erf_v(V z) {
  const D d;
  V e = hn::Sub(hn::Set(d, 1.0f), erfc_abs(z));
  V r = hn::IfThenElse(hn::Lt(z, hn::Zero(d)), hn::Neg(e), e);
  return hn::IfThenElse(hn::IsNaN(z), z, r);
}

HWY_INLINE V gelu_exact(V x) {
  const D d;
  V z = hn::Mul(x, hn::Set(d, 0.70710678118654752f));
  V c = erfc_abs(z);
  // 1 + erf(z) is 2 − erfc(z) for z ≥ 0 and erfc(|z|) for z < 0.
  V one_plus =
      hn::IfThenElse(hn::Lt(z, hn::Zero(d)), c, hn::Sub(hn::Set(d, 2.0f), c));
  return hn::Mul(hn::Mul(hn::Set(d, 0.5f), x), one_plus);
}

HWY_INLINE V gelu_tanh(V x) {
  const D d;
  V inner =
      hn::Mul(hn::Set(d, 0.7978845608028654f),
              hn::MulAdd(hn::Mul(hn::Set(d, 0.044715f), x), hn::Mul(x, x), x));
  V t = hn::Tanh(d, inner);
  return hn::Mul(hn::Mul(hn::Set(d, 0.5f), x), hn::Add(hn::Set(d, 1.0f), t));
}

// σ(x) from e = exp(−|x|), which never overflows: 1/(1+e) or e/(1+e).
HWY_INLINE V sigmoid_v(V x) {
  const D d;
  V e = hn::Exp(d, hn::Neg(hn::Abs(x)));
  V s = hn::Div(hn::Set(d, 1.0f), hn::Add(hn::Set(d, 1.0f), e));
  V r = hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Mul(e, s), s);
  return hn::IfThenElse(hn::IsNaN(x), x, r);
}

// log(1 + exp(x)) = max(x, 0) + log1p(exp(−|x|)), free of overflow.
HWY_INLINE V softplus_v(V x) {
  const D d;
  V tail = hn::Log1p(d, hn::Exp(d, hn::Neg(hn::Abs(x))));
  V r = hn::Add(hn::Max(x, hn::Zero(d)), tail);
  return hn::IfThenElse(hn::IsNaN(x), x, r);
}

template <UnaryKind kKind>
HWY_INLINE V unary_op(V x) {
  const D d;
  if constexpr (kKind == UnaryKind::kRelu) {
    return hn::IfThenElse(hn::Gt(x, hn::Zero(d)), x, hn::Zero(d));
  }
  if constexpr (kKind == UnaryKind::kSigmoid) return sigmoid_v(x);
  if constexpr (kKind == UnaryKind::kTanh) return hn::Tanh(d, x);
  if constexpr (kKind == UnaryKind::kExp) return exp_safe(x);
  if constexpr (kKind == UnaryKind::kLog) return log_safe(x);
  if constexpr (kKind == UnaryKind::kSqrt) return hn::Sqrt(x);
  if constexpr (kKind == UnaryKind::kNeg) return hn::Neg(x);
  if constexpr (kKind == UnaryKind::kAbs) return hn::Abs(x);
  if constexpr (kKind == UnaryKind::kReciprocal) {
    return hn::Div(hn::Set(d, 1.0f), x);
  }
  if constexpr (kKind == UnaryKind::kErf) return erf_v(x);
  if constexpr (kKind == UnaryKind::kGeluExact) return gelu_exact(x);
  if constexpr (kKind == UnaryKind::kGeluTanh) return gelu_tanh(x);
  if constexpr (kKind == UnaryKind::kSoftplus) return softplus_v(x);
}

template <UnaryKind kKind>
void unary_loop(const float* x, float* y, size_t n) {
  for_each_block(n, [&](size_t i, size_t count) {
    store(unary_op<kKind>(load(x + i, count)), y + i, count);
  });
}

void UnaryImpl(UnaryKind kind, const float* x, float* y, size_t n) {
  switch (kind) {
#define SEQRT_UNARY_CASE(k) \
  case UnaryKind::k:        \
    return unary_loop<UnaryKind::k>(x, y, n);
    SEQRT_UNARY_CASE(kRelu)
    SEQRT_UNARY_CASE(kSigmoid)
    SEQRT_UNARY_CASE(kTanh)
    SEQRT_UNARY_CASE(kExp)
    SEQRT_UNARY_CASE(kLog)
    SEQRT_UNARY_CASE(kSqrt)
    SEQRT_UNARY_CASE(kNeg)
    SEQRT_UNARY_CASE(kAbs)
    SEQRT_UNARY_CASE(kReciprocal)
    SEQRT_UNARY_CASE(kErf)
    SEQRT_UNARY_CASE(kGeluExact)
    SEQRT_UNARY_CASE(kGeluTanh)
    SEQRT_UNARY_CASE(kSoftplus)
#undef SEQRT_UNARY_CASE
  }
}

float SumImpl(const float* x, size_t n) {
  const D d;
  V sum = hn::Zero(d);
  for_each_block(n, [&](size_t i, size_t count) {
    sum = hn::Add(sum, load(x + i, count));
  });
  return hn::GetLane(hn::SumOfLanes(d, sum));
}

float SumSquaredDeviationImpl(const float* x, float mean, size_t n) {
  const D d;
  const V vmean = hn::Set(d, mean);
  V sum = hn::Zero(d);
  for_each_block(n, [&](size_t i, size_t count) {
    V dev = hn::Sub(load(x + i, count), vmean);
    // Lanes past the tail loaded 0: mask them so they add nothing.
    dev = hn::IfThenElseZero(hn::FirstN(d, count), dev);
    sum = hn::MulAdd(dev, dev, sum);
  });
  return hn::GetLane(hn::SumOfLanes(d, sum));
}

void NormalizeRowImpl(const float* x, float mean, float inv_std,
                      const float* scale, const float* bias, float* y,
                      size_t n) {
  const D d;
  const V vmean = hn::Set(d, mean);
  const V vinv = hn::Set(d, inv_std);
  for_each_block(n, [&](size_t i, size_t count) {
    V norm = hn::Mul(hn::Sub(load(x + i, count), vmean), vinv);
    V out = hn::Mul(norm, load(scale + i, count));
    if (bias != nullptr) out = hn::Add(out, load(bias + i, count));
    store(out, y + i, count);
  });
}

void AddScalarImpl(const float* x, float c, float* y, size_t n) {
  const D d;
  const V vc = hn::Set(d, c);
  for_each_block(n, [&](size_t i, size_t count) {
    store(hn::Add(load(x + i, count), vc), y + i, count);
  });
}

void RkStagePassImpl(const float* y, const float* f, float a, float* next,
                     const float* acc_in, float b, float* acc_out, size_t n) {
  const D d;
  const V va = hn::Set(d, a);
  const V vb = hn::Set(d, b);
  for_each_block(n, [&](size_t i, size_t count) {
    V vf = load(f + i, count);
    if (acc_out != nullptr) {
      store(hn::MulAdd(vb, vf, load(acc_in + i, count)), acc_out + i, count);
    }
    if (next != nullptr) {
      store(hn::MulAdd(va, vf, load(y + i, count)), next + i, count);
    }
  });
}

void RkGatedRowImpl(const float* y, const float* f1, const float* f2, float g,
                    float* out, size_t n) {
  const D d;
  const V vg = hn::Set(d, g);
  const V vh = hn::Set(d, 1.0f - g);
  for_each_block(n, [&](size_t i, size_t count) {
    V acc = hn::MulAdd(vg, load(f1 + i, count), load(y + i, count));
    store(hn::MulAdd(vh, load(f2 + i, count), acc), out + i, count);
  });
}

}  // namespace seqrt::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace seqrt::cpu {

HWY_EXPORT(BinaryImpl);
HWY_EXPORT(UnaryImpl);
HWY_EXPORT(SumImpl);
HWY_EXPORT(SumSquaredDeviationImpl);
HWY_EXPORT(NormalizeRowImpl);
HWY_EXPORT(AddScalarImpl);
HWY_EXPORT(RkStagePassImpl);
HWY_EXPORT(RkGatedRowImpl);

void binary_f32(BinaryKind kind, const float* a, size_t a_step, const float* b,
                size_t b_step, float* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(BinaryImpl)(kind, a, a_step, b, b_step, out, n);
}
void unary_f32(UnaryKind kind, const float* x, float* y, size_t n) {
  HWY_DYNAMIC_DISPATCH(UnaryImpl)(kind, x, y, n);
}
float sum_f32(const float* x, size_t n) {
  return HWY_DYNAMIC_DISPATCH(SumImpl)(x, n);
}
float sum_squared_deviation_f32(const float* x, float mean, size_t n) {
  return HWY_DYNAMIC_DISPATCH(SumSquaredDeviationImpl)(x, mean, n);
}
void normalize_row_f32(const float* x, float mean, float inv_std,
                       const float* scale, const float* bias, float* y,
                       size_t n) {
  HWY_DYNAMIC_DISPATCH(NormalizeRowImpl)(x, mean, inv_std, scale, bias, y, n);
}
void add_scalar_f32(const float* x, float c, float* y, size_t n) {
  HWY_DYNAMIC_DISPATCH(AddScalarImpl)(x, c, y, n);
}
void rk_stage_pass_f32(const float* y, const float* f, float a, float* next,
                       const float* acc_in, float b, float* acc_out, size_t n) {
  HWY_DYNAMIC_DISPATCH(RkStagePassImpl)(y, f, a, next, acc_in, b, acc_out, n);
}
void rk_gated_row_f32(const float* y, const float* f1, const float* f2, float g,
                      float* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(RkGatedRowImpl)(y, f1, f2, g, out, n);
}

}  // namespace seqrt::cpu
#endif  // HWY_ONCE
