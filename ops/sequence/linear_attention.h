// The contract of ONNX LinearAttention (opset 27), written once for the op
// and every backend: input/output indices, attributes with their defaults
// (the schema is built from the same constants), and the check on dims and
// dtypes that returns the checked problem, so every backend rejects the
// same bad inputs with the same message. Layouts (packed heads): query
// (B,T,H_q·d_k), key (B,T,H_kv·d_k), value (B,T,H_kv·d_v), output
// (B,T,H_q·d_v), past/present state (B,H_kv,d_k,d_v), decay (B,T,H_kv·d_k)
// or (B,T,H_kv), beta (B,T,H_kv) or (B,T,1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "ops/op_schema.h"
#include "ops/sequence/scan_common.h"

namespace seqrt {

struct LinearAttentionInput {
  enum : size_t {
    kQuery,
    kKey,
    kValue,
    kPastState,  // optional
    kDecay,      // optional; read by gated and gated_delta
    kBeta,       // optional; read by delta and gated_delta
    kCount
  };
};
struct LinearAttentionOutput {
  enum : size_t { kOutput, kPresentState /* optional */, kCount };
};

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

struct LinearAttentionAttrs {
  static constexpr const char* kQHeadsName = "q_num_heads";    // required
  static constexpr const char* kKvHeadsName = "kv_num_heads";  // required
  static constexpr const char* kUpdateRuleName = "update_rule";
  static constexpr const char* kScaleName = "scale";
  static constexpr const char* kChunkSizeName = "chunk_size";
  static constexpr const char* kUpdateRuleDefault = "gated_delta";
  static constexpr float kScaleDefault = 0.0f;  // 0: 1/sqrt(d_k)
  static constexpr int64_t kChunkSizeDefault = 64;

  int64_t q_heads = 0;  // 0 when the node lacks it (the schema requires it)
  int64_t kv_heads = 0;
  LinearAttentionRule rule = LinearAttentionRule::kGatedDelta;
  std::string rule_name = kUpdateRuleDefault;
  float scale = kScaleDefault;
  int64_t chunk_size = kChunkSizeDefault;

  static LinearAttentionAttrs from(const Node& node);
  // The schema's attributes, from the constants above.
  static std::vector<AttrSpec> specs();
};

// Validates concrete input dims and dtypes (LinearAttentionInput order) and
// the attributes of a LinearAttention node; errors name the node and what
// was expected.
Result<LinearAttentionProblem> check_linear_attention(
    const Node& node, const KernelInputTypes& types);
// The same from a kernel's tensors.
Result<LinearAttentionProblem> check_linear_attention(const KernelContext& ctx);

}  // namespace seqrt
