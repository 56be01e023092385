// ONNX LinearAttention (opset 27): the checked problem description shared by
// the reference kernel (linear_attention.cc) and the backends' kernels, so
// every backend rejects the same bad inputs with the same message.
#pragma once

#include <cstdint>

#include "graph/tensor.h"
#include "ops/op_context.h"

namespace seqrt {

enum class LinearAttentionRule { kLinear, kGated, kDelta, kGatedDelta };

inline bool rule_uses_decay(LinearAttentionRule rule) {
  return rule == LinearAttentionRule::kGated ||
         rule == LinearAttentionRule::kGatedDelta;
}
inline bool rule_uses_beta(LinearAttentionRule rule) {
  return rule == LinearAttentionRule::kDelta ||
         rule == LinearAttentionRule::kGatedDelta;
}

struct LinearAttentionProblem {
  LinearAttentionRule rule = LinearAttentionRule::kGatedDelta;
  int64_t batch = 0;
  int64_t seq = 0;       // T
  int64_t q_heads = 0;   // H_q
  int64_t kv_heads = 0;  // H_kv; query head h reads kv head h / group
  int64_t group = 1;     // H_q / H_kv
  int64_t dk = 0;
  int64_t dv = 0;
  double scale = 1.0;  // resolved: the attribute, or 1/sqrt(dk) when 0
  // decay is (B,T,H_kv·dk) (per key channel) or (B,T,H_kv) (per head);
  // beta is (B,T,H_kv) or (B,T,1) (shared by all heads). Only meaningful
  // when the rule reads the input.
  bool decay_per_key = false;
  bool beta_per_head = true;
  int64_t chunk_size = 64;          // a tuning hint, never changes results
  DType state_dtype = DType::kF32;  // present_state: past_state's, else T
};

// Validates the inputs (query, key, value, past_state?, decay?, beta?) and
// attributes of a LinearAttention node; errors name the node and what was
// expected. `inputs` holds null for omitted optional inputs.
Result<LinearAttentionProblem> check_linear_attention(
    const OpContext& ctx, const Tensor* query, const Tensor* key,
    const Tensor* value, const Tensor* past_state, const Tensor* decay,
    const Tensor* beta);

}  // namespace seqrt
