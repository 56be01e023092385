// Vector loops of seqrt::NeuralMemory's token step (neural_memory.cc),
// compiled per target by Highway and dispatched at run time.
//
// The token step is bound by the traffic over the memory's weights and
// momentum (2·P floats per head, resident in L2), so each layer is updated
// in one pass that also feeds the products the next steps need: a block of
// columns is walked down all rows with the right factor and the two
// accumulators in registers, so each weight and momentum element is loaded
// and stored exactly once per token.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/neural_memory_step_simd.cc"
#include <hwy/foreach_target.h>
#include <hwy/highway.h>
// clang-format on

#include "backends/cpu/kernels/neural_memory_step.h"

HWY_BEFORE_NAMESPACE();
namespace seqrt::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;

// Columns [c, c + kVecs·lanes) of the pass, down every row. The pass's
// fields are read into locals first: stores through w and s could alias
// them, which would reload every field after every store.
template <int kVecs, bool kA, bool kB>
HWY_INLINE void PassColumns(const NmRowPass& p, int64_t c) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  using V = hn::Vec<D>;
  const int64_t rows = p.rows, cols = p.cols;
  const float* left = p.left;
  const float* xa = p.xa;
  const float* xb = p.xb;
  const float neg_theta = -p.theta;
  float* w = p.w + c;
  float* s = p.s + c;
  V right[kVecs], acc_a[kVecs], acc_b[kVecs];
  for (int j = 0; j < kVecs; ++j) {
    right[j] = hn::LoadU(d, p.right + c + j * lanes);
    acc_a[j] = hn::Zero(d);
    acc_b[j] = hn::Zero(d);
  }
  const V eta = hn::Set(d, p.eta);
  const V keep = hn::Set(d, p.keep);
  for (int64_t i = 0; i < rows; ++i, w += cols, s += cols) {
    const V coef = hn::Set(d, neg_theta * left[i]);
    V a_i, b_i;
    if (kA) a_i = hn::Set(d, xa[i]);
    if (kB) b_i = hn::Set(d, xb[i]);
    for (int j = 0; j < kVecs; ++j) {
      const V s_new =
          hn::MulAdd(coef, right[j], hn::Mul(eta, hn::LoadU(d, s + j * lanes)));
      const V w_new = hn::MulAdd(keep, hn::LoadU(d, w + j * lanes), s_new);
      hn::StoreU(s_new, d, s + j * lanes);
      hn::StoreU(w_new, d, w + j * lanes);
      if (kA) acc_a[j] = hn::MulAdd(a_i, w_new, acc_a[j]);
      if (kB) acc_b[j] = hn::MulAdd(b_i, w_new, acc_b[j]);
    }
  }
  for (int j = 0; j < kVecs; ++j) {
    if (kA) hn::StoreU(acc_a[j], d, p.acc_a + c + j * lanes);
    if (kB) hn::StoreU(acc_b[j], d, p.acc_b + c + j * lanes);
  }
}

// Columns [c, cols) one at a time (widths that are not a multiple of the
// vector length).
void PassTail(const NmRowPass& p, int64_t c) {
  for (; c < p.cols; ++c) {
    float sum_a = 0, sum_b = 0;
    for (int64_t i = 0; i < p.rows; ++i) {
      float& s = p.s[i * p.cols + c];
      float& w = p.w[i * p.cols + c];
      s = p.eta * s - p.theta * p.left[i] * p.right[c];
      w = p.keep * w + s;
      if (p.xa != nullptr) sum_a += p.xa[i] * w;
      if (p.xb != nullptr) sum_b += p.xb[i] * w;
    }
    if (p.xa != nullptr) p.acc_a[c] = sum_a;
    if (p.xb != nullptr) p.acc_b[c] = sum_b;
  }
}

template <bool kA, bool kB>
void Pass(const NmRowPass& p) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t c = 0;
  for (; c + 2 * lanes <= p.cols; c += 2 * lanes) PassColumns<2, kA, kB>(p, c);
  for (; c + lanes <= p.cols; c += lanes) PassColumns<1, kA, kB>(p, c);
  PassTail(p, c);
}

void RowPassImpl(const NmRowPass& p) {
  const bool a = p.xa != nullptr, b = p.xb != nullptr;
  if (a && b) {
    Pass<true, true>(p);
  } else if (a) {
    Pass<true, false>(p);
  } else if (b) {
    Pass<false, true>(p);
  } else {
    Pass<false, false>(p);
  }
}

void RowDotsImpl(const float* w, int64_t rows, int64_t cols, const float* x,
                 const float* scale, float* out) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t j = 0; j < rows; ++j) {
    const float* row = w + j * cols;
    auto sum0 = hn::Zero(d);
    auto sum1 = hn::Zero(d);
    int64_t c = 0;
    for (; c + 2 * lanes <= cols; c += 2 * lanes) {
      sum0 = hn::MulAdd(hn::LoadU(d, row + c), hn::LoadU(d, x + c), sum0);
      sum1 = hn::MulAdd(hn::LoadU(d, row + c + lanes),
                        hn::LoadU(d, x + c + lanes), sum1);
    }
    for (; c + lanes <= cols; c += lanes) {
      sum0 = hn::MulAdd(hn::LoadU(d, row + c), hn::LoadU(d, x + c), sum0);
    }
    float sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(sum0, sum1)));
    for (; c < cols; ++c) sum += row[c] * x[c];
    out[j] = sum * scale[j];
  }
}

}  // namespace seqrt::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace seqrt::cpu {

HWY_EXPORT(RowPassImpl);
HWY_EXPORT(RowDotsImpl);

void neural_memory_row_pass(const NmRowPass& pass) {
  HWY_DYNAMIC_DISPATCH(RowPassImpl)(pass);
}

void neural_memory_row_dots(const float* w, int64_t rows, int64_t cols,
                            const float* x, const float* scale, float* out) {
  HWY_DYNAMIC_DISPATCH(RowDotsImpl)(w, rows, cols, x, scale, out);
}

}  // namespace seqrt::cpu
#endif  // HWY_ONCE
