// The chunkwise form of decayed linear attention in fp32 (tiling.h,
// ChunkedStateTiling): seqrt::Retention, ONNX LinearAttention with the
// linear and per-head gated rules, and seqrt::SSD (k = Δ·B, v = x, q = C,
// a_t = Δ_t·A_h, plus D·x and the z gate). With a_t the step's log-decay and
// cs_t its running sum inside a chunk, S_0 the state before the chunk:
//   y_t = out_scale · (e^{cs_t} q_t S_0 + Σ_{s≤t} e^{cs_t − cs_s} (q_t·k_s)
//   v_s) S_end = e^{cs_last} S_0 + Σ_s e^{cs_last − cs_s} k_s v_sᵀ
// Exponents are differences inside one chunk, never γ^(−m) (OPS.md). The
// state slice stays in shared memory for the whole pass.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/kernels/column_scan.h"
#include "backends/cuda/tiling.h"

namespace seqrt::cuda {

struct ChunkwiseArgs {
  int64_t batch = 0, heads = 0, steps = 0;
  int64_t rows = 0, cols = 0;  // dk, dv
  int64_t queries = 1;         // query heads h·queries + q share head h
  ScanView key, value, query;
  // log-decay a_t of (b, head, step); null data: no decay (a_t = 0). For
  // SSD the view is dt instead.
  ScanView log_decay;
  // SSD only: Δ_t = clamp(softplus?(dt + dt_bias[h]), dt_min, dt_max)
  // scales the key and a_t = Δ_t·A_h; D_h·v is added; z (value layout)
  // gates the output by silu(z).
  bool ssd = false;
  const float* ssd_a = nullptr;
  const float* dt_bias = nullptr;
  bool dt_softplus = true;
  float dt_min = 0.0f, dt_max = 0.0f;
  const float* skip = nullptr;
  const float* gate = nullptr;
  float key_scale = 1.0f;
  float out_scale = 1.0f;
  float* out = nullptr;
  int64_t out_batch = 0, out_head = 0, out_step = 0;
  // State of (b, head) at (b·heads + head)·rows·cols, (i, j) at
  // i·state_row + j·state_col; present may be past.
  const float* past_state = nullptr;
  float* present_state = nullptr;
  int64_t state_row = 0, state_col = 1;
};

cudaError_t launch_chunkwise(const ChunkwiseArgs& args,
                             const ChunkedStateTiling& tiling,
                             cudaStream_t stream);

}  // namespace seqrt::cuda
