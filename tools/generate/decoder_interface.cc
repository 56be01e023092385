#include "tools/generate/decoder_interface.h"

#include <set>

#include <fmt/format.h>

namespace seqrt {
namespace {

constexpr const char* kInputIds = "input_ids";
constexpr const char* kTokens = "tokens";
constexpr const char* kAttentionMask = "attention_mask";
constexpr const char* kPositionIds = "position_ids";

// An integer (i64 or i32) input of rank 2, (batch, length).
Result<DType> index_input(const Value& value, const std::string& model) {
  if ((value.dtype != DType::kI64 && value.dtype != DType::kI32) ||
      (value.shape && value.shape->rank() != 2)) {
    return invalid_model(
        "model '{}': input '{}' is {}, expected i64 or i32 of rank 2 "
        "(batch, length)",
        model, value.name, dtype_name(value.dtype));
  }
  return value.dtype;
}

template <typename T>
Tensor index_tensor(std::vector<int64_t> values) {
  int64_t length = static_cast<int64_t>(values.size());
  return Tensor::from_vector<T>({1, length},
                                std::vector<T>(values.begin(), values.end()));
}

Tensor typed_indices(DType dtype, std::vector<int64_t> values) {
  if (dtype == DType::kI32) return index_tensor<int32_t>(std::move(values));
  return index_tensor<int64_t>(std::move(values));
}

}  // namespace

std::map<std::string, Tensor> DecoderInterface::feeds(
    const std::vector<int64_t>& ids, int64_t past) const {
  std::map<std::string, Tensor> feeds;
  int64_t length = static_cast<int64_t>(ids.size());
  feeds[ids_input] = Tensor::from_vector<int64_t>({1, length}, ids);
  if (mask_dtype != DType::kUndefined) {
    feeds[kAttentionMask] =
        typed_indices(mask_dtype, std::vector<int64_t>(past + length, 1));
  }
  if (positions_dtype != DType::kUndefined) {
    std::vector<int64_t> positions(length);
    for (int64_t i = 0; i < length; ++i) positions[i] = past + i;
    feeds[kPositionIds] = typed_indices(positions_dtype, std::move(positions));
  }
  return feeds;
}

Result<DecoderInterface> find_decoder_interface(const Graph& graph,
                                                const std::string& model) {
  std::set<ValueId> state_inputs;
  for (const StatePair& pair : graph.state_pairs)
    state_inputs.insert(pair.input);
  DecoderInterface interface;
  for (ValueId id : graph.inputs) {
    if (state_inputs.count(id)) continue;
    const Value& value = graph.value(id);
    if (value.name == kInputIds || value.name == kTokens) {
      if (value.dtype != DType::kI64 || !value.shape ||
          value.shape->rank() != 2) {
        return invalid_model("model '{}': input '{}' must be i64 of rank 2",
                             model, value.name);
      }
      interface.ids_input = value.name;
    } else if (value.name == kAttentionMask) {
      SEQRT_ASSIGN_OR_RETURN(interface.mask_dtype, index_input(value, model));
    } else if (value.name == kPositionIds) {
      SEQRT_ASSIGN_OR_RETURN(interface.positions_dtype,
                             index_input(value, model));
    } else {
      return invalid_model(
          "model '{}': generate cannot feed input '{}' (it feeds '{}' or "
          "'{}', '{}', '{}' and the state inputs past_*)",
          model, value.name, kInputIds, kTokens, kAttentionMask, kPositionIds);
    }
  }
  bool has_logits = false;
  for (ValueId id : graph.outputs) {
    const Value& value = graph.value(id);
    if (value.name != kLogitsOutput) continue;
    has_logits = true;
    if (value.shape && value.shape->rank() == 3 &&
        (*value.shape)[2].is_fixed()) {
      interface.scored_tokens = (*value.shape)[2].value();
    }
  }
  if (interface.ids_input.empty() || !has_logits) {
    return invalid_model(
        "model '{}' is not a generative model: generate needs an input '{}' "
        "or '{}' (i64, (1, seq)) and an output '{}' (1, seq, vocabulary)",
        model, kInputIds, kTokens, kLogitsOutput);
  }
  if (graph.state_pairs.empty()) {
    return invalid_model(
        "model '{}' has no state pairs: generate needs a decoder that carries "
        "its state (a KV cache past_key_values.N.key/value -> "
        "present.N.key/value); a prefill-only export would forget the text "
        "after each token",
        model);
  }
  return interface;
}

}  // namespace seqrt
