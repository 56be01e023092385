// Vectorised f32 loops of the CPU elementwise, normalization and
// Runge-Kutta kernels (Google Highway, dispatched at run time like
// ../simd/vec.h). Pointers need no alignment; `n` counts elements.
#pragma once

#include <cstddef>

namespace seqrt::cpu {

enum class BinaryKind { kAdd, kSub, kMul, kDiv, kMax, kMin };

// out[i] = a[i·a_step] op b[i·b_step]; each step is 0 (a broadcast scalar)
// or 1. Max and Min return NaN when either side is NaN, as the reference.
void binary_f32(BinaryKind kind, const float* a, size_t a_step, const float* b,
                size_t b_step, float* out, size_t n);

enum class UnaryKind {
  kRelu,
  kSigmoid,
  kTanh,
  kExp,
  kLog,
  kSqrt,
  kNeg,
  kAbs,
  kReciprocal,
  kErf,
  kGeluExact,
  kGeluTanh,
  kSoftplus,
};

// y[i] = f(x[i]); `y` may equal `x`.
void unary_f32(UnaryKind kind, const float* x, float* y, size_t n);

float sum_f32(const float* x, size_t n);
// Σ (x[i] − mean)², for a variance computed in two passes (no cancellation).
float sum_squared_deviation_f32(const float* x, float mean, size_t n);
// y[i] = (x[i] − mean)·inv_std·scale[i] + bias[i]; `bias` may be null.
void normalize_row_f32(const float* x, float mean, float inv_std,
                       const float* scale, const float* bias, float* y,
                       size_t n);
// y[i] = x[i] + c.
void add_scalar_f32(const float* x, float c, float* y, size_t n);

// One Runge-Kutta pass over a stage f: next[i] = y[i] + a·f[i] and
// acc_out[i] = acc_in[i] + b·f[i], each skipped when its output is null.
// Each element is read before it is written, so `next` may alias `f` (a
// body that returns its input) and `acc_out` may alias `acc_in`.
void rk_stage_pass_f32(const float* y, const float* f, float a, float* next,
                       const float* acc_in, float b, float* acc_out, size_t n);
// out[i] = y[i] + g·f1[i] + (1 − g)·f2[i], one row of the gated rk2 step.
void rk_gated_row_f32(const float* y, const float* f1, const float* f2, float g,
                      float* out, size_t n);

}  // namespace seqrt::cpu
