// seqrt::Attention forward, fp32 path (OPS.md): softmax or sigmoid scores,
// softcap, causal and sliding windows with bottom-right aligned positions,
// GQA, past keys/values read in place. Keys and values stream through
// shared memory in tiles chosen by plan_attention; softmax keeps a running
// max and sum per query row (online softmax), sigmoid needs neither.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/tiling.h"

namespace seqrt::cuda {

struct AttentionArgs {
  const float* q = nullptr;           // (B, Hq, Tq, d)
  const float* k = nullptr;           // (B, Hkv, Tk, d)
  const float* v = nullptr;           // (B, Hkv, Tk, dv)
  const float* past_key = nullptr;    // (B, Hkv, Tp, d) or null
  const float* past_value = nullptr;  // (B, Hkv, Tp, dv) or null
  float* y = nullptr;                 // (B, Hq, Tq, dv)
  int64_t batch = 0, q_heads = 0, kv_heads = 0;
  int64_t q_length = 0, new_length = 0, past_length = 0;
  int64_t head_size = 0, value_head_size = 0;
  float scale = 1.0f;
  float softcap = 0.0f;  // 0: off
  bool sigmoid = false;
  float sigmoid_bias = 0.0f;
  bool causal = false;
  int64_t window_left = -1;  // -1: unbounded
  int64_t window_right = -1;
};

// Uses tiling.block_q, block_k and warps; the keys of a row are covered by
// one block (tiling.kv_splits is not applied yet).
cudaError_t launch_attention(const AttentionArgs& args,
                             const AttentionTiling& tiling,
                             cudaStream_t stream);

}  // namespace seqrt::cuda
