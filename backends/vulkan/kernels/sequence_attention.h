// Attention on Vulkan (seqrt::Attention and ONNX Attention-23/24): the
// checked sizes of one node, shared by the planner entry and the record
// step (sequence_attention.cc).
#pragma once

#include <array>
#include <vector>

#include "backends/vulkan/kernel.h"

namespace seqrt::vulkan {

struct AttentionCall {
  bool onnx = false;    // ONNX semantics (else seqrt::Attention)
  bool packed = false;  // ONNX 3D inputs, (B,T,H*d)
  int64_t batch = 0, q_heads = 0, kv_heads = 0;
  int64_t q_len = 0, new_len = 0, past_len = 0;
  int64_t head_dim = 0, value_dim = 0;
  bool causal = false;
  bool sigmoid = false;
  float scale = 1.0f, softcap = 0.0f, sigmoid_bias = 0.0f;
  int64_t window_left = -1, window_right = -1;
  // Added to the bottom-right aligned query position (ONNX's top-left
  // causal alignment without a cache).
  int64_t causal_shift = 0;
  bool has_mask = false, mask_is_bool = false;
  std::array<int64_t, 4> mask_strides{};  // against (B,Hq,Tq,keys)
  int64_t mask_cols = 0;                  // keys at or past it are hidden
  std::vector<int64_t> kv_lens;           // from a constant nonpad_kv_seqlen

  int64_t total_len() const { return past_len + new_len; }
  // Query rows one kv head serves: (Hq / Hkv) * Tq.
  int64_t rows_per_kv_head() const { return q_heads / kv_heads * q_len; }
};

// Reads and checks one node's sizes and attributes (errors name the node).
Result<AttentionCall> attention_call(const NodeArgs& args, bool onnx);

}  // namespace seqrt::vulkan
