// The character tokenizer of a generative model, read from the model's
// metadata so that `seqrt generate` needs nothing but the model file:
//
//   seqrt.tokenizer = "char"
//   seqrt.vocab     = JSON list of strings, one character each; token id i
//                     is the i-th entry (["\n", " ", "!", ...])
//
// Characters are UTF-8 code points: a vocabulary entry is one code point,
// and a prompt is split into code points before lookup.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/status.h"
#include "tools/generate/tokenizer.h"

namespace seqrt {

inline constexpr const char* kTokenizerKey = "seqrt.tokenizer";
inline constexpr const char* kVocabKey = "seqrt.vocab";
// A character of the vocabulary is one UTF-8 code point: at most 4 bytes.
inline constexpr int64_t kMaxUtf8Bytes = 4;

class CharTokenizer : public Tokenizer {
 public:
  // From a model's metadata; `model` names the model in errors.
  static Result<CharTokenizer> from_metadata(
      const std::map<std::string, std::string>& metadata,
      const std::string& model);

  int64_t size() const override { return static_cast<int64_t>(chars_.size()); }
  // Token ids of `text`; an error names the first character not in the
  // vocabulary and where it is.
  Result<std::vector<int64_t>> encode(const std::string& text) const override;
  // The character of token `id` (0 <= id < size()).
  std::string decode_token(int64_t id) const override { return chars_[id]; }
  int64_t max_token_bytes() const override { return kMaxUtf8Bytes; }

 private:
  std::vector<std::string> chars_;
  std::map<std::string, int64_t> ids_;
};

// `text` cut into UTF-8 code points; an error for invalid UTF-8.
Result<std::vector<std::string>> split_utf8(const std::string& text);

// A JSON array of strings (the vocabulary's format), read with
// nlohmann-json.
Result<std::vector<std::string>> parse_json_strings(const std::string& json);

}  // namespace seqrt
