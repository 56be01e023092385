// UTF-8 code points and the character classes of GPT-2's pre-tokenizer
// regex: \p{L} (letters), \p{N} (numbers) and \s (White_Space), from a
// table generated out of the Unicode database (make_unicode_table.py).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graph/status.h"

namespace seqrt {

// A code point and the byte offset in its text where it starts.
struct CodePoint {
  uint32_t value = 0;
  size_t offset = 0;
};

// The code points of `text`, with one more entry at the end whose offset is
// text.size(); an error naming the byte offset for invalid UTF-8 (bad lead
// or continuation bytes, overlong forms, surrogates, past U+10FFFF).
Result<std::vector<CodePoint>> decode_utf8(std::string_view text);

// `code` as UTF-8 appended to `out` (code <= U+10FFFF).
void append_utf8(uint32_t code, std::string& out);

enum class CharClass { kLetter, kNumber, kWhitespace, kOther };

// Letter: general category L*; number: N*; whitespace: the White_Space
// property (what \s matches in the Oniguruma regex that `tokenizers` runs).
CharClass char_class(uint32_t code);

}  // namespace seqrt
