// GPT-2's byte-level pieces of a tokenizer.json (`ByteLevel` pre-tokenizer
// and decoder): the split of a text into words by GPT-2's regex
//
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// written out by hand (no regex engine on the hot path), and the map of the
// 256 byte values to printable characters that the BPE vocabulary is
// written in.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/status.h"

namespace seqrt {

// The words of `text` by the regex above, in order; together they are the
// whole text. An error for invalid UTF-8.
Result<std::vector<std::string_view>> split_gpt2(std::string_view text);

class ByteLevelMap {
 public:
  ByteLevelMap();
  // `bytes` with each byte replaced by its character (UTF-8).
  std::string encode(std::string_view bytes) const;
  // The bytes of a string of mapped characters; nullopt if a character is
  // not one of the 256 (the token is not byte-level).
  std::optional<std::string> decode(std::string_view mapped) const;

 private:
  // 68 bytes are not printable and take the code points 256 to 323.
  static constexpr uint32_t kMoved = 68;
  std::array<uint32_t, 256> char_of_byte_{};
  std::array<unsigned char, kMoved> byte_of_moved_{};
};

}  // namespace seqrt
