// One fp32 kernel for the sequence ops whose matrix state splits into
// independent columns (tiling.h, ColumnScanTiling): seqrt::Retention, ONNX
// LinearAttention (linear, gated, delta, gated_delta) and seqrt::SSD. For
// each (batch, head) and each state column j, step t does
//   S[:, j] ·= decay_t                    (scalar or one factor per row)
//   u_j = β_t (v_t[j] − S[:, j]·k_t)      (delta rules; else u_j = v_t[j])
//   S[:, j] += k_t u_j
//   y_t,q[j] = out_scale · (q_t,q · S[:, j]) (+ skip·v_t[j], · silu(z))
// with the state in registers or shared memory for the whole sequence;
// only the final state is written (DESIGN.md §5.2).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/tiling.h"

namespace seqrt::cuda {

// Element (b, head, step, index) of an input: data + b·batch +
// (head / head_divisor)·head + step·step_stride + index·index_stride.
struct ScanView {
  const float* data = nullptr;
  int64_t batch = 0;
  int64_t head = 0;
  int64_t head_divisor = 1;
  int64_t step = 0;
  int64_t index = 1;
};

// How step t's decay factor is formed from the `decay` view.
enum class ScanDecay {
  kNone,       // 1
  kMultiply,   // decay(t), one per head (Retention's γ_h)
  kExp,        // exp(decay(t)), one per head (gated rules)
  kExpPerRow,  // exp(decay(t, i)) for row i (per-key gated rules)
  kSsd,        // exp(Δ_t · A_h), Δ from the `decay` view as SSD's dt
};

struct ColumnScanArgs {
  int64_t batch = 0, heads = 0, steps = 0;
  int64_t rows = 0, cols = 0;
  // Query vectors per head (GQA): query and output head h·queries + q.
  int64_t queries = 1;
  ScanView key, value, query, decay, beta;
  ScanDecay decay_kind = ScanDecay::kNone;
  bool delta_rule = false;
  float key_scale = 1.0f;  // multiplies every key (Retention's scale)
  float out_scale = 1.0f;
  // Output (b, head, step, column): out + b·out_batch + head·out_head +
  // step·out_step + column.
  float* out = nullptr;
  int64_t out_batch = 0, out_head = 0, out_step = 0;
  // SSD only: Δ = clamp(softplus?(dt + dt_bias[h]), dt_min, dt_max)
  // scales the key; A (H); skip D (H) adds D_h·v; z (value layout) gates.
  const float* ssd_a = nullptr;
  const float* dt_bias = nullptr;
  bool dt_softplus = true;
  float dt_min = 0.0f, dt_max = 0.0f;
  const float* skip = nullptr;
  const float* gate = nullptr;
  // State of (b, head): base (b·heads + head)·rows·cols, element (i, j) at
  // i·state_row + j·state_col. present may be past (read before written).
  const float* past_state = nullptr;
  float* present_state = nullptr;
  int64_t state_row = 0, state_col = 1;
};

cudaError_t launch_column_scan(const ColumnScanArgs& args,
                               const ColumnScanTiling& tiling,
                               cudaStream_t stream);

}  // namespace seqrt::cuda
