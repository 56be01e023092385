// Highway's dynamic dispatch (pattern of backends/cpu/simd/vec.cc): compiled
// once per target, the best one picked at run time.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/attention_tile_simd.cc"
#include <hwy/foreach_target.h>
#include <hwy/highway.h>
// clang-format on

#include <limits>

#include "backends/cpu/simd/fast_exp-inl.h"

#include "backends/cpu/kernels/attention_tile.h"

HWY_BEFORE_NAMESPACE();
namespace seqrt::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

// 2^x that is exactly 0 below -126 (and for -inf), so hidden keys weigh
// nothing; FastExp2 alone stops at 2^-126.
HWY_INLINE V Exp2(D d, V x) {
  return hn::IfThenZeroElse(hn::Lt(x, hn::Set(d, -126.0f)), FastExp2(d, x));
}

int64_t RowBlockImpl() { return 2 * static_cast<int64_t>(hn::Lanes(D())); }
int64_t LanesImpl() { return static_cast<int64_t>(hn::Lanes(D())); }

// The epilogue of one score vector (key j, rows rb + h*N ...): masking,
// then sigmoid or the running max; stores it to st.
HWY_INLINE void FinishScore(D d, const ScoreTileArgs& a, V s, int64_t j,
                            int64_t r, V* tmax) {
  if (!a.whole) {
    const hn::RebindToSigned<D> di;
    const auto pos = hn::Set(di, a.j0 + static_cast<int32_t>(j));
    // lo <= pos < hi
    const auto in = hn::AndNot(hn::Lt(pos, hn::LoadU(di, a.lo + r)),
                               hn::Lt(pos, hn::LoadU(di, a.hi + r)));
    s = hn::IfThenElse(hn::RebindMask(d, in), s,
                       hn::Set(d, -std::numeric_limits<float>::infinity()));
  }
  if (!a.sigmoid) *tmax = hn::Max(*tmax, s);
  hn::StoreU(s, d, a.st + j * a.rows_padded + r);
}

// Scores of keys [j, j + KB) for rows [r, r + 2N): 2*KB accumulators over d.
template <int KB>
HWY_INLINE void ScoreBlock(D d, const ScoreTileArgs& a, int64_t j, int64_t r,
                           V* tmax0, V* tmax1) {
  const size_t n = hn::Lanes(d);
  V acc0[KB], acc1[KB];
  for (int i = 0; i < KB; ++i) acc0[i] = acc1[i] = hn::Zero(d);
  const float* k = a.k + j * a.k_stride;
  const float* qt = a.qt + r;
  for (int64_t c = 0; c < a.head_dim; ++c) {
    const V b0 = hn::LoadU(d, qt + c * a.rows_padded);
    const V b1 = hn::LoadU(d, qt + c * a.rows_padded + n);
    for (int i = 0; i < KB; ++i) {
      const V ki = hn::Set(d, k[i * a.k_stride + c]);
      acc0[i] = hn::MulAdd(ki, b0, acc0[i]);
      acc1[i] = hn::MulAdd(ki, b1, acc1[i]);
    }
  }
  for (int i = 0; i < KB; ++i) {
    FinishScore(d, a, acc0[i], j + i, r, tmax0);
    FinishScore(d, a, acc1[i], j + i, r + static_cast<int64_t>(n), tmax1);
  }
}

void ScoreTileImpl(const ScoreTileArgs& a) {
  const D d;
  const size_t n = hn::Lanes(d);
  constexpr int kKeys = 6;  // 12 accumulators + 2 Q^T vectors + 1 key
  for (int64_t r = 0; r < a.rows_padded; r += 2 * n) {
    V tmax0 = hn::Zero(d), tmax1 = hn::Zero(d);
    if (!a.sigmoid) {
      tmax0 = hn::LoadU(d, a.tile_max + r);
      tmax1 = hn::LoadU(d, a.tile_max + r + n);
    }
    int64_t j = 0;
    for (; j + kKeys <= a.keys; j += kKeys) {
      ScoreBlock<kKeys>(d, a, j, r, &tmax0, &tmax1);
    }
    for (; j < a.keys; ++j) ScoreBlock<1>(d, a, j, r, &tmax0, &tmax1);
    if (!a.sigmoid) {
      hn::StoreU(tmax0, d, a.tile_max + r);
      hn::StoreU(tmax1, d, a.tile_max + r + n);
    }
  }
}

void OnlineSoftmaxImpl(float* st, int64_t keys, int64_t rows_padded,
                       const float* tile_max, float* m, float* l,
                       float* alpha) {
  const D d;
  const size_t n = hn::Lanes(d);
  const V neg_inf = hn::Set(d, -std::numeric_limits<float>::infinity());
  for (int64_t r = 0; r < rows_padded; r += static_cast<int64_t>(n)) {
    const V m_old = hn::LoadU(d, m + r);
    const V m_new = hn::Max(m_old, hn::LoadU(d, tile_max + r));
    // A row with nothing visible yet subtracts 0: its -inf logits give 0.
    const V shift = hn::IfThenZeroElse(hn::Eq(m_new, neg_inf), m_new);
    const V a = Exp2(d, hn::Sub(m_old, shift));
    V sum0 = hn::Zero(d), sum1 = hn::Zero(d);
    float* col = st + r;
    int64_t j = 0;
    for (; j + 2 <= keys; j += 2) {
      const V p0 = Exp2(d, hn::Sub(hn::LoadU(d, col), shift));
      const V p1 = Exp2(d, hn::Sub(hn::LoadU(d, col + rows_padded), shift));
      hn::StoreU(p0, d, col);
      hn::StoreU(p1, d, col + rows_padded);
      sum0 = hn::Add(sum0, p0);
      sum1 = hn::Add(sum1, p1);
      col += 2 * rows_padded;
    }
    if (j < keys) {
      const V p0 = Exp2(d, hn::Sub(hn::LoadU(d, col), shift));
      hn::StoreU(p0, d, col);
      sum0 = hn::Add(sum0, p0);
    }
    hn::StoreU(m_new, d, m + r);
    hn::StoreU(hn::MulAdd(hn::LoadU(d, l + r), a, hn::Add(sum0, sum1)), d,
               l + r);
    hn::StoreU(a, d, alpha + r);
  }
}

// Hidden keys (-inf) must weigh exactly 0; only tiles with hidden keys
// pay for the check.
template <bool kHidden>
void SigmoidLoop(float* st, int64_t count, float bias2) {
  const D d;
  const size_t n = hn::Lanes(d);
  const V neg_bias = hn::Set(d, -bias2);
  const V neg_inf = hn::Set(d, -std::numeric_limits<float>::infinity());
  const V one = hn::Set(d, 1.0f);
  for (int64_t i = 0; i < count; i += static_cast<int64_t>(n)) {
    const V s = hn::LoadU(d, st + i);
    // 1 / (1 + 2^-x); 2^-x is clamped, so x < -127 leaves 5.9e-39, not 0.
    V p = hn::Div(one, hn::Add(one, FastExp2(d, hn::Sub(neg_bias, s))));
    if (kHidden) p = hn::IfThenZeroElse(hn::Eq(s, neg_inf), p);
    hn::StoreU(p, d, st + i);
  }
}

void SigmoidTileImpl(float* st, int64_t count, float bias2, bool whole) {
  if (whole) {
    SigmoidLoop<false>(st, count, bias2);
  } else {
    SigmoidLoop<true>(st, count, bias2);
  }
}

// O rows [r, r + NR), columns [c, c + NV*N): NR*NV accumulators over keys.
template <int NR, int NV>
HWY_INLINE void PvBlock(D d, const float* pt, int64_t keys, int64_t rows_padded,
                        const float* v, int64_t v_stride, int64_t dv,
                        const float* alpha, float* o, int64_t r, int64_t c) {
  const size_t n = hn::Lanes(d);
  V acc[NR][NV];
  for (int i = 0; i < NR; ++i) {
    for (int h = 0; h < NV; ++h) acc[i][h] = hn::Zero(d);
  }
  for (int64_t j = 0; j < keys; ++j) {
    const float* vj = v + j * v_stride + c;
    V vv[NV];
    for (int h = 0; h < NV; ++h) vv[h] = hn::LoadU(d, vj + h * n);
    const float* pj = pt + j * rows_padded + r;
    for (int i = 0; i < NR; ++i) {
      const V p = hn::Set(d, pj[i]);
      for (int h = 0; h < NV; ++h) acc[i][h] = hn::MulAdd(p, vv[h], acc[i][h]);
    }
  }
  for (int i = 0; i < NR; ++i) {
    float* out = o + (r + i) * dv + c;
    for (int h = 0; h < NV; ++h) {
      const V old = hn::LoadU(d, out + h * n);
      const V sum = alpha == nullptr
                        ? hn::Add(old, acc[i][h])
                        : hn::MulAdd(old, hn::Set(d, alpha[r + i]), acc[i][h]);
      hn::StoreU(sum, d, out + h * n);
    }
  }
}

// All column blocks of rows [r, r + NR).
template <int NR>
HWY_INLINE void PvRows(D d, const float* pt, int64_t keys, int64_t rows_padded,
                       const float* v, int64_t v_stride, int64_t dv,
                       const float* alpha, float* o, int64_t r) {
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  int64_t c = 0;
  for (; c + 2 * n <= dv; c += 2 * n) {
    PvBlock<NR, 2>(d, pt, keys, rows_padded, v, v_stride, dv, alpha, o, r, c);
  }
  if (c < dv) {
    PvBlock<NR, 1>(d, pt, keys, rows_padded, v, v_stride, dv, alpha, o, r, c);
  }
}

void AccumulatePvImpl(const float* pt, int64_t keys, int64_t rows,
                      int64_t rows_padded, const float* v, int64_t v_stride,
                      int64_t dv, const float* alpha, float* o) {
  const D d;
  // Rows in blocks of 6 (12 accumulators), the rest (a multiple of 2 once
  // rounded up to 4) in blocks of 2; pad rows are computed, not stored out.
  const int64_t rows4 = (rows + 3) / 4 * 4;
  int64_t r = 0;
  for (; r + 6 <= rows4; r += 6) {
    PvRows<6>(d, pt, keys, rows_padded, v, v_stride, dv, alpha, o, r);
  }
  for (; r < rows4; r += 2) {
    PvRows<2>(d, pt, keys, rows_padded, v, v_stride, dv, alpha, o, r);
  }
}

}  // namespace seqrt::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace seqrt::cpu {

HWY_EXPORT(RowBlockImpl);
HWY_EXPORT(LanesImpl);
HWY_EXPORT(ScoreTileImpl);
HWY_EXPORT(OnlineSoftmaxImpl);
HWY_EXPORT(SigmoidTileImpl);
HWY_EXPORT(AccumulatePvImpl);

int64_t tile_row_block() { return HWY_DYNAMIC_DISPATCH(RowBlockImpl)(); }
int64_t tile_lanes() { return HWY_DYNAMIC_DISPATCH(LanesImpl)(); }

void score_tile(const ScoreTileArgs& args) {
  HWY_DYNAMIC_DISPATCH(ScoreTileImpl)(args);
}

void online_softmax_tile(float* st, int64_t keys, int64_t rows_padded,
                         const float* tile_max, float* m, float* l,
                         float* alpha) {
  HWY_DYNAMIC_DISPATCH(OnlineSoftmaxImpl)
  (st, keys, rows_padded, tile_max, m, l, alpha);
}

void sigmoid_tile(float* st, int64_t count, float bias2, bool whole) {
  HWY_DYNAMIC_DISPATCH(SigmoidTileImpl)(st, count, bias2, whole);
}

void accumulate_pv(const float* pt, int64_t keys, int64_t rows,
                   int64_t rows_padded, const float* v, int64_t v_stride,
                   int64_t dv, const float* alpha, float* o) {
  HWY_DYNAMIC_DISPATCH(AccumulatePvImpl)
  (pt, keys, rows, rows_padded, v, v_stride, dv, alpha, o);
}

}  // namespace seqrt::cpu
#endif  // HWY_ONCE
