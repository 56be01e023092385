// What `seqrt generate` feeds a decoder model and reads back. Two kinds of
// graph fit:
//   - seqrt's own generative models (samples/demo): `tokens` in;
//   - a Hugging Face decoder export (optimum / torch.onnx with a KV cache):
//     `input_ids` in, optionally `attention_mask` (ones over past + new
//     tokens) and `position_ids` (past .. past + new - 1).
// Both give `logits` (1, seq, vocabulary) and carry their state in state
// pairs (past_key_values.N.key -> present.N.key, paired by the importer),
// which a Stream holds between runs. Any other input is an error naming it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"
#include "graph/tensor.h"

namespace seqrt {

struct DecoderInterface {
  std::string ids_input;                      // "input_ids" or "tokens"
  DType mask_dtype = DType::kUndefined;       // attention_mask; none if so
  DType positions_dtype = DType::kUndefined;  // position_ids; none if so
  // The last dim of `logits` when the graph fixes it: the tokens scored.
  std::optional<int64_t> scored_tokens;

  // The inputs of a run over `ids` that follow `past` tokens already run.
  std::map<std::string, Tensor> feeds(const std::vector<int64_t>& ids,
                                      int64_t past) const;
};

inline constexpr const char* kLogitsOutput = "logits";

// The interface of `graph`; an error naming `model` and what is missing
// or not understood.
Result<DecoderInterface> find_decoder_interface(const Graph& graph,
                                                const std::string& model);

}  // namespace seqrt
