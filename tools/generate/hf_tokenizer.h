// A Hugging Face `tokenizer.json` of model type BPE, read by our own code
// (no Python, no Rust `tokenizers`): what `seqrt generate --tokenizer`
// encodes prompts and decodes tokens with. Encoding runs the library's
// pipeline: added tokens are cut out of the text first (longest match,
// leftmost first); each piece between them is normalized, pre-tokenized
// into words and each word tokenized by the BPE model (bpe_model.h); the
// post-processor adds its special tokens around the result.
//
// Supported components (anything else is refused by name):
//   normalizer     null, Prepend, Replace (string pattern), Sequence of them
//   pre_tokenizer  null, ByteLevel (GPT-2's regex split, byte_level.h),
//                  Metaspace (replacement, prepend_scheme, split)
//   model          BPE (bpe_model.h)
//   post_processor null, ByteLevel, TemplateProcessing (special tokens and
//                  $A in `single`), Sequence of them
//   decoder        null, ByteLevel, Metaspace, Replace (string pattern),
//                  ByteFallback, Fuse, Strip, Sequence of them
// This covers GPT-2 style (byte-level) and Llama 2 style (byte_fallback
// with "▁") tokenizers. Refused, among others: WordPiece, Unigram and
// WordLevel models; NFC/NFKC/Lowercase/BertNormalizer normalizers; Split
// and Whitespace pre-tokenizers and pre-tokenizer Sequences (Llama 3 and
// Qwen style, whose split regex differs from GPT-2's). Added tokens are
// matched in the raw text, also those marked "normalized" (the library
// matches those after normalization; the same for the normalizers above
// unless the token holds a space).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tools/generate/bpe_model.h"
#include "tools/generate/byte_level.h"
#include "tools/generate/tokenizer.h"

namespace seqrt {

struct AddedToken {
  int64_t id = 0;
  std::string content;
  bool special = false;
  bool lstrip = false;       // absorbs the whitespace before it
  bool rstrip = false;       // absorbs the whitespace after it
  bool single_word = false;  // matches only between non-word characters
};

class HfTokenizer : public Tokenizer {
 public:
  // Reads and checks `path`; every error names the file and the component.
  static Result<HfTokenizer> load(const std::string& path);
  // From the parsed file (errors without the file name).
  static Result<HfTokenizer> from_json(const nlohmann::json& file);

  int64_t size() const override;
  Result<std::vector<int64_t>> encode(const std::string& text) const override;
  std::string decode_token(int64_t id) const override;
  int64_t max_token_bytes() const override { return max_token_bytes_; }
  // The text of `ids` as the library's decode() gives it (the decoder's
  // Strip applied at the start); special added tokens left out when
  // `skip_special`.
  std::string decode(const std::vector<int64_t>& ids, bool skip_special) const;

  const std::vector<AddedToken>& added_tokens() const { return added_; }
  // The id of a token by its text: an added token or a vocabulary entry.
  std::optional<int64_t> id_of(const std::string& token) const;

  enum class Prepend { kNever, kFirst, kAlways };
  struct NormalizerStep {
    std::string prepend;           // Prepend, when not empty
    std::string pattern, content;  // Replace
  };
  struct PreTokenizer {
    enum class Kind { kNone, kByteLevel, kMetaspace } kind = Kind::kNone;
    bool add_prefix_space = false;  // ByteLevel
    bool use_regex = true;          // ByteLevel
    std::string replacement;        // Metaspace
    Prepend prepend = Prepend::kAlways;
    bool split = true;
  };
  struct DecoderStep {
    enum class Kind {
      kByteLevel,
      kReplace,
      kByteFallback,
      kFuse,
      kStrip,
      kMetaspace
    } kind;
    std::string pattern, content;  // Replace; Strip's content; Metaspace's
    int64_t start = 0;             // Strip: characters cut at the start
    bool strip_first = false;      // Metaspace: marks of token 0 dropped
  };

 private:
  HfTokenizer(BpeModel model) : model_(std::move(model)) {}
  // `text` cut at the added tokens: pieces of text and added-token ids.
  struct Piece {
    std::string text;
    int64_t added = -1;
    size_t offset = 0;  // where the text starts in the prompt
  };
  std::vector<Piece> split_added(const std::string& text) const;
  Status encode_piece(const Piece& piece, std::vector<int64_t>& ids) const;
  // The token's text after the per-token decoder steps (no Strip);
  // `first`: the first token of a decode(), whose Metaspace marks are
  // dropped.
  std::string decode_one(int64_t id, bool first) const;
  const AddedToken* added_by_id(int64_t id) const;

  BpeModel model_;
  std::vector<AddedToken> added_;                    // longest content first
  std::unordered_map<int64_t, size_t> added_index_;  // id -> added_ index
  std::vector<NormalizerStep> normalizer_;
  PreTokenizer pre_tokenizer_;
  std::vector<DecoderStep> decoder_;
  std::vector<int64_t> prefix_, suffix_;  // added by the post-processor
  ByteLevelMap byte_map_;
  int64_t max_token_bytes_ = 4;  // an unknown character at least
};

}  // namespace seqrt
