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

// One row of a scan with a scalar decay per step (SSD's recurrent form)
// over `length` steps, the row vectorised over n:
//   h_t = decay[t]·h_{t-1} + (dt_t·x_t)·b_t,   y_t = Σ_n h_t[n]·c_t[n].
// b, c: rows of padded_n floats, bc_stride apart; h: padded_n.
struct ScanRow {
  size_t length = 0;
  size_t padded_n = 0;
  const float* dt = nullptr;
  const float* x = nullptr;
  ptrdiff_t x_stride = 1;
  const float* decay = nullptr;
  const float* b = nullptr;
  const float* c = nullptr;
  size_t bc_stride = 0;
  float* h = nullptr;
  float* y = nullptr;  // written, not accumulated
  ptrdiff_t y_stride = 1;
};
void scan_row(const ScanRow& row);

// Mamba-1 over one stretch of time for scan_lanes() channels at once, one
// channel per lane, so the state of every n is one vector and nothing is
// reduced across lanes:
//   h_t[n] = 2^(Δ_t·a2[n])·h_{t-1}[n] + (Δ_t·u_t)·b_t[n],
//   y_t = Σ_n h_t[n]·c_t[n],
// with a2 = A·log2(e) and the exp by FastExp2 (simd/fast_exp-inl.h, ~2 ulp).
// dt, dtx, y: (length, lanes); a2, h: (n, lanes); b, c: rows of n floats,
// bc_stride apart, one per step (broadcast to every lane). Unused lanes need
// a2 = 0 and Δ·u = 0 (their state then stays as it was). `decay` is scratch
// of channel_scan_decay_floats(length) floats.
struct ChannelScan {
  size_t length = 0;
  size_t n = 0;
  const float* dt = nullptr;
  const float* dtx = nullptr;  // Δ·u
  const float* a2 = nullptr;
  const float* b = nullptr;
  const float* c = nullptr;
  size_t bc_stride = 0;
  float* h = nullptr;  // in and out
  float* y = nullptr;  // written
  float* decay = nullptr;
};
void scan_channels(const ChannelScan& scan);
size_t channel_scan_decay_floats(size_t length);

// (step, lane) blocks for ChannelScan, `lanes` = scan_lanes() rows wide:
// columns [0, len) of rows[0 .. lanes) become block[t·lanes + i], and back.
// Every rows[i] must point at len floats (a row of zeros for unused lanes;
// block_to_rows writes all lanes, so point unused ones at scratch).
void rows_to_block(const float* const* rows, size_t len, float* block);
void block_to_rows(const float* block, size_t len, float* const* rows);

// On (len, lanes) blocks, per-lane parameters as vectors of `lanes` floats:
// dt = softplus?(dt + bias) in place (delta_row's rule, unclamped), and
// dtx = dt·u.
void delta_block(float* dt, const float* bias, bool softplus, const float* u,
                 float* dtx, size_t len);

// One row l of SSD's masked intra-chunk product (ssd_chunked.cc):
//   out[k] = in[k]·e^{min(cs_l − cs[k], 0)}·dt[k]   for k < count,
// the exp by FastExp (~2 ulp). `in` may be `out`.
void decay_mask_row(const float* in, const float* cs, const float* dt,
                    float cs_l, size_t count, float* out);

// y += dskip·x (when has_dskip); then y *= z·σ(z) (when z is set).
void skip_and_gate(float* y, const float* x, bool has_dskip, float dskip,
                   const float* z, size_t n);

}  // namespace seqrt::cpu
