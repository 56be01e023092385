// The `model` of a tokenizer.json of type "BPE": a vocabulary (token text
// -> id) and ranked merges. A word (a piece of text after normalization and
// pre-tokenization) starts as its characters, each a token; then the
// adjacent pair whose merge has the lowest rank (leftmost on ties) is
// merged, again and again, as the `tokenizers` library does.
//
// Options read: unk_token, fuse_unk, byte_fallback (a character outside the
// vocabulary becomes its UTF-8 bytes as the tokens <0xXX>), ignore_merges
// (a word that is a token is taken whole). Refused with an error naming
// the field: dropout (training only), continuing_subword_prefix and
// end_of_word_suffix (WordPiece-like BPE, not used by decoder LLMs).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "graph/status.h"

namespace seqrt {

// The largest token id accepted among `tokens` tokens: ids may leave
// holes, but a few wild ids must not make the tables (sized by the largest
// id) grow past the file's size.
inline int64_t max_token_id(int64_t tokens) { return 2 * tokens + 255; }

class BpeModel {
 public:
  // From the `model` object; errors name the field ("model.merges[3]").
  static Result<BpeModel> from_json(const nlohmann::json& model);

  // Appends the token ids of `word` to `ids`. An error when a character is
  // in neither the vocabulary nor (with byte_fallback) its byte tokens and
  // there is no unk_token.
  Status tokenize(std::string_view word, std::vector<int64_t>& ids) const;

  std::optional<int64_t> id_of(std::string_view token) const;
  // The text of token `id`, or null when no vocabulary entry has that id.
  const std::string* token_of(int64_t id) const;
  // One past the largest id of the vocabulary.
  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }
  bool byte_fallback() const { return byte_fallback_; }

 private:
  struct Merge {
    int64_t rank = 0;
    int64_t merged = 0;
  };
  static uint64_t pair_key(int64_t left, int64_t right) {
    return (static_cast<uint64_t>(left) << 32) | static_cast<uint64_t>(right);
  }
  Status read_vocab(const nlohmann::json& vocab);
  Status read_merges(const nlohmann::json& merges);
  // The initial symbols of `word`: its characters' ids, byte tokens or unk.
  Status initial_symbols(std::string_view word,
                         std::vector<int64_t>& symbols) const;
  // Applies the merges to `symbols` in place.
  void merge(std::vector<int64_t>& symbols) const;

  std::unordered_map<std::string, int64_t> vocab_;
  std::vector<std::string> tokens_;  // by id
  std::vector<bool> has_token_;      // ids may have holes
  std::unordered_map<uint64_t, Merge> merges_;
  std::optional<int64_t> unk_;
  bool fuse_unk_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;
  std::array<int64_t, 256> byte_ids_{};  // <0xXX>, -1 when absent
};

}  // namespace seqrt
