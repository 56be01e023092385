// The Hugging Face JSON files that sit beside an export and its
// tokenizer.json, read for two things `seqrt generate` needs to know:
//
// End of sequence, the first of these that names one (token ids past the
// tokenizer are an error naming the file):
//   1. eos_token_id (an id or a list) in generation_config.json, then in
//      config.json, beside the model;
//   2. eos_token (text, or {"content": text}) in tokenizer_config.json
//      beside tokenizer.json;
//   3. the tokenizer's special added token when it has exactly one (GPT-2's
//      <|endoftext|>).
// Otherwise there is none and generation runs for --max-tokens.
//
// Position limit: max_position_embeddings, n_positions or n_ctx in
// config.json beside the model (a learned position table has that many
// rows); without it, no limit is checked.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/status.h"
#include "tools/generate/hf_tokenizer.h"

namespace seqrt {

struct GenerationConfig {
  std::vector<int64_t> eos_ids;
  std::string eos_source;  // where they come from, for messages
  std::optional<int64_t> max_positions;
  std::string max_positions_source;
};

Result<GenerationConfig> read_generation_config(
    const std::string& model_path, const std::string& tokenizer_path,
    const HfTokenizer& tokenizer);

}  // namespace seqrt
