// The CPU attention core ("flash" attention: tiled, online softmax, never a
// Tq x Tk matrix), shared by seqrt::Attention and the ONNX Attention adapter.
// It takes plain sizes, strides and f32 pointers, so any (B,H,T,d) or packed
// (B,T,H*d) layout can be passed without a copy.
#pragma once

#include <cstdint>

namespace seqrt::cpu {

struct AttentionArgs {
  int64_t batch = 0;
  int64_t q_heads = 0;
  int64_t kv_heads = 0;   // q_heads % kv_heads == 0; head h reads kv head
                          // h / (q_heads / kv_heads)
  int64_t q_len = 0;      // Tq
  int64_t kv_len = 0;     // keys in k/v (the cache capacity with kv_lens)
  int64_t head_dim = 0;   // d
  int64_t value_dim = 0;  // dv

  // Element strides of the batch, head and time axes; the last axis (d or
  // dv) is contiguous.
  const float* q = nullptr;
  int64_t q_stride[3] = {0, 0, 0};
  const float* k = nullptr;
  int64_t k_stride[3] = {0, 0, 0};
  const float* v = nullptr;
  int64_t v_stride[3] = {0, 0, 0};
  float* y = nullptr;
  int64_t y_stride[3] = {0, 0, 0};

  // Optional mask over (B,Hq,Tq,kv_len) with broadcast strides (0 on
  // broadcast axes): a float mask is added to the logits (-inf hides a key),
  // a bool mask hides keys where it is false. At most one is set.
  const float* mask_f32 = nullptr;
  const bool* mask_bool = nullptr;
  int64_t mask_stride[4] = {0, 0, 0, 0};

  // Optional valid key count per batch (each in [0, kv_len]); queries are
  // then bottom-right aligned to it: position p_i = len_b - q_len + i.
  const int64_t* kv_lens = nullptr;
  // Position of query 0; negative (the default) means bottom-right aligned
  // as above. ONNX Attention's top-left causal mask is q_position0 = 0.
  int64_t q_position0 = -1;

  bool sigmoid = false;  // sigmoid(s + sigmoid_bias) scores, no normalising
  float scale = 1.0f;
  float softcap = 0.0f;  // 0 = off
  float sigmoid_bias = 0.0f;
  bool causal = false;
  int64_t window_left = -1;  // -1 = unbounded
  int64_t window_right = -1;
};

// Y = attention(Q, K, V) as OPS.md defines it (rows with no visible key are
// 0). Runs on the parallel_for threads; the arguments must already be
// validated (sizes consistent, kv_lens in range).
void attention_forward(const AttentionArgs& args);

}  // namespace seqrt::cpu
