// Vectorised inner loops of the state-space kernels (selective_scan.cc,
// ssd.cc), dispatched at run time like simd/vec.h. The state of one row
// stays in registers for the whole pass over time (DESIGN.md §5.2).
#pragma once

#include <cstddef>
#include <cstdint>

namespace seqrt::cpu {

// f32 lanes of the dispatched target; B/C/A/state rows are padded with
// zeros to a multiple of it, so the loops need no tails.
size_t scan_lanes();

// Δ = clamp(softplus?(x + bias), lo, hi), Mamba's softplus (threshold 20).
void delta_row(const float* x, float bias, bool softplus, float lo, float hi,
               float* out, size_t n);

// One row of a diagonal scan over `length` steps:
//   h_t = decay_t ∘ h_{t-1} + (dt_t·x_t)·b_t,   y_t = Σ_n h_t[n]·c_t[n]
// with decay_t = exp(dt_t·a) per n when `a` is set (Mamba-1), else the
// scalar decay[t] (Mamba-2). b, c: rows of padded_n floats, bc_stride
// apart; h: padded_n.
struct ScanRow {
  size_t length = 0;
  size_t padded_n = 0;
  const float* dt = nullptr;
  const float* x = nullptr;
  ptrdiff_t x_stride = 1;
  const float* a = nullptr;
  const float* decay = nullptr;
  const float* b = nullptr;
  const float* c = nullptr;
  size_t bc_stride = 0;
  float* h = nullptr;
  float* y = nullptr;  // written, not accumulated
  ptrdiff_t y_stride = 1;
};
void scan_row(const ScanRow& row);

// y += dskip·x (when has_dskip); then y *= z·σ(z) (when z is set).
void skip_and_gate(float* y, const float* x, bool has_dskip, float dskip,
                   const float* z, size_t n);

}  // namespace seqrt::cpu
