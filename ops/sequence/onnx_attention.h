// ONNX Attention (opset 23/24): the validated sizes and attributes of one
// call, shared by the reference kernel and the backends' kernels so that
// every backend rejects exactly what the reference rejects.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/status.h"
#include "ops/op_context.h"

namespace seqrt {

// Input and output positions of ONNX Attention.
enum OnnxAttentionInput : size_t {
  kOnnxAttnQ = 0,
  kOnnxAttnK = 1,
  kOnnxAttnV = 2,
  kOnnxAttnMask = 3,
  kOnnxAttnPastKey = 4,
  kOnnxAttnPastValue = 5,
  kOnnxAttnNonpadKvSeqlen = 6,
};
enum OnnxAttentionOutput : size_t {
  kOnnxAttnY = 0,
  kOnnxAttnPresentKey = 1,
  kOnnxAttnPresentValue = 2,
  kOnnxAttnQkMatmul = 3,
};

// What qk_matmul_output holds (attribute qk_matmul_output_mode).
enum class QkOutputMode : int64_t {
  kScaledProduct = 0,  // scale * Q.K^T
  kSoftcapped = 1,     // after softcap
  kWithBias = 2,       // after softcap and the mask/causal/padding bias
  kSoftmax = 3,        // the attention weights
};

struct OnnxAttentionSpec {
  bool packed = false;  // 3D inputs (B,T,H*d); 4D inputs are (B,H,T,d)
  int64_t batch = 0;
  int64_t q_heads = 0;
  int64_t kv_heads = 0;
  int64_t q_len = 0;      // Tq
  int64_t new_len = 0;    // Tk: keys in K/V
  int64_t past_len = 0;   // Tp: keys in past_key/past_value (0 if absent)
  int64_t total_len = 0;  // Ttot = Tp + Tk
  int64_t head_dim = 0;   // d
  int64_t value_dim = 0;  // dv
  double scale = 1.0;     // the attribute, or 1/sqrt(d) when absent
  double softcap = 0.0;   // 0 = off
  bool causal = false;
  QkOutputMode qk_mode = QkOutputMode::kScaledProduct;
  // attn_mask: its dims (rank 1..4, right-aligned against (B,Hq,Tq,L) with
  // L <= Ttot; keys at L..Ttot-1 are hidden), and whether it is bool.
  bool has_mask = false;
  bool mask_is_bool = false;
  std::vector<int64_t> mask_dims;
  // nonpad_kv_seqlen, each in [0, Ttot]; empty when absent.
  std::vector<int64_t> kv_lens;

  // Element strides (batch, head, time) of Q, K/V-shaped inputs and Y in
  // their stored layout; the last axis is contiguous.
  void q_strides(int64_t out[3]) const;
  void kv_strides(int64_t width, int64_t out[3]) const;  // K: d, V: dv
  void y_strides(int64_t out[3]) const;
  // The output Y's dims: (B,Tq,Hq*dv) for 3D inputs, else (B,Hq,Tq,dv).
  std::vector<int64_t> y_dims() const;

  // Causal alignment as ONNX defines it: query i of batch b sees key j iff
  // j <= i + causal_offset(b). The offset is Tp with a past cache,
  // nonpad_kv_seqlen[b] - Tq with a fixed-capacity cache, else 0 (top-left).
  int64_t causal_offset(int64_t b) const;
  // Valid keys of batch b (Ttot without nonpad_kv_seqlen).
  int64_t valid_len(int64_t b) const;
};

// Checks every input and attribute of an ONNX Attention node (shapes,
// dtypes, attribute values, the values of nonpad_kv_seqlen).
Result<OnnxAttentionSpec> onnx_attention_spec(const KernelContext& ctx);

// Whether the node's caller asked for output `i`.
bool onnx_attention_wants_output(const KernelContext& ctx, size_t i);

}  // namespace seqrt
