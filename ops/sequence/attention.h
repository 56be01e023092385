// seqrt::Attention (OPS.md "Attention"): the validated sizes and attributes
// of one call, shared by the reference kernel and the backends' kernels so
// that every backend rejects exactly what the reference rejects.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "graph/status.h"
#include "ops/op_context.h"
#include "ops/op_schema.h"

namespace seqrt {

// Input and output positions of seqrt::Attention.
enum AttentionInput : size_t {
  kAttnQ = 0,
  kAttnK = 1,
  kAttnV = 2,
  kAttnMask = 3,
  kAttnPastKey = 4,
  kAttnPastValue = 5,
  kAttnNonpadKvSeqlen = 6,
  kAttnCount
};
enum AttentionOutput : size_t {
  kAttnY = 0,
  kAttnPresentKey = 1,
  kAttnPresentValue = 2,
};

// The attributes with the schema's defaults (the schema is built from these
// constants); `from` checks them with the reference's messages.
struct AttentionAttrs {
  static constexpr const char* kScoreName = "score";
  static constexpr const char* kScaleName = "scale";
  static constexpr const char* kSoftcapName = "softcap";
  static constexpr const char* kIsCausalName = "is_causal";
  static constexpr const char* kWindowLeftName = "window_left";
  static constexpr const char* kWindowRightName = "window_right";
  static constexpr const char* kSigmoidBiasName = "sigmoid_bias";
  static constexpr const char* kScoreDefault = "softmax";  // or "sigmoid"
  static constexpr float kSoftcapDefault = 0.0f;           // 0 = off
  static constexpr int64_t kIsCausalDefault = 0;
  static constexpr int64_t kWindowDefault = -1;  // unbounded
  static constexpr float kSigmoidBiasDefault = 0.0f;

  bool sigmoid = false;
  std::optional<float> scale;  // absent: 1/sqrt(d)
  float softcap = kSoftcapDefault;
  bool causal = kIsCausalDefault != 0;
  int64_t window_left = kWindowDefault;
  int64_t window_right = kWindowDefault;
  float sigmoid_bias = kSigmoidBiasDefault;

  static Result<AttentionAttrs> from(const Node& node);
  // The schema's attributes, from the constants above.
  static std::vector<AttrSpec> specs();
  // The scale for head size d: the attribute, or 1/sqrt(d).
  float scale_for(int64_t head_dim) const;
};

struct AttentionSpec {
  int64_t batch = 0;
  int64_t q_heads = 0;
  int64_t kv_heads = 0;
  int64_t q_len = 0;      // Tq
  int64_t new_len = 0;    // Tk: keys in K/V
  int64_t past_len = 0;   // Tp: keys in past_key/past_value (0 if absent)
  int64_t total_len = 0;  // Ttot = Tp + Tk
  int64_t head_dim = 0;   // d
  int64_t value_dim = 0;  // dv
  bool sigmoid = false;   // score == "sigmoid"
  float scale = 1.0f;     // the attribute, or 1/sqrt(d) when absent
  float softcap = 0.0f;   // 0 = off
  float sigmoid_bias = 0.0f;
  bool causal = false;
  int64_t window_left = -1;  // -1 = unbounded
  int64_t window_right = -1;
  // attn_mask: its dims (rank <= 4, broadcastable to (B,Hq,Tq,Ttot)), and
  // whether it is bool (true = attend) rather than added to the logits.
  bool has_mask = false;
  bool mask_is_bool = false;
  std::vector<int64_t> mask_dims;
  // nonpad_kv_seqlen: the valid key count of each batch, each in [0, Ttot];
  // empty when the input is absent (every batch has Ttot keys).
  std::vector<int64_t> kv_lens;

  // Valid keys of batch b (Ttot without nonpad_kv_seqlen).
  int64_t valid_len(int64_t b) const {
    return kv_lens.empty() ? total_len : kv_lens[static_cast<size_t>(b)];
  }
};

// Checks every input and attribute of a seqrt::Attention node (shapes,
// dtypes, the values of nonpad_kv_seqlen) and returns the sizes.
Result<AttentionSpec> attention_spec(const KernelContext& ctx);

// Whether the node's caller asked for output `i` (present_* are optional).
bool attention_wants_output(const KernelContext& ctx, size_t i);

}  // namespace seqrt
