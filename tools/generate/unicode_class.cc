#include "tools/generate/unicode_class.h"

#include <algorithm>
#include <iterator>

namespace seqrt {
namespace {

struct CodeRange {
  uint32_t first;
  uint32_t last;
};

#include "tools/generate/unicode_table.inc"

template <size_t N>
bool in_ranges(const CodeRange (&ranges)[N], uint32_t code) {
  // The first range whose last code point is not below `code`.
  const CodeRange* found =
      std::lower_bound(std::begin(ranges), std::end(ranges), code,
                       [](const CodeRange& range, uint32_t value) {
                         return range.last < value;
                       });
  return found != std::end(ranges) && found->first <= code;
}

bool is_white_space(uint32_t code) {
  return (code >= 0x09 && code <= 0x0D) || code == 0x20 || code == 0x85 ||
         code == 0xA0 || code == 0x1680 || (code >= 0x2000 && code <= 0x200A) ||
         code == 0x2028 || code == 0x2029 || code == 0x202F || code == 0x205F ||
         code == 0x3000;
}

}  // namespace

Result<std::vector<CodePoint>> decode_utf8(std::string_view text) {
  std::vector<CodePoint> points;
  points.reserve(text.size() + 1);
  for (size_t i = 0; i < text.size();) {
    auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    unsigned char lead = byte(i);
    size_t length = lead < 0x80             ? 1
                    : (lead & 0xE0) == 0xC0 ? 2
                    : (lead & 0xF0) == 0xE0 ? 3
                    : (lead & 0xF8) == 0xF0 ? 4
                                            : 0;
    bool valid = length > 0 && i + length <= text.size();
    uint32_t code = length == 1 ? lead : lead & (0x7Fu >> length);
    for (size_t k = 1; valid && k < length; ++k) {
      valid = (byte(i + k) & 0xC0) == 0x80;
      code = (code << 6) | (byte(i + k) & 0x3F);
    }
    static constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
    valid = valid && code >= kSmallest[length] && code <= 0x10FFFF &&
            !(code >= 0xD800 && code <= 0xDFFF);
    if (!valid) return invalid_argument("invalid UTF-8 at byte {}", i);
    points.push_back({code, i});
    i += length;
  }
  points.push_back({0, text.size()});
  return points;
}

void append_utf8(uint32_t code, std::string& out) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

CharClass char_class(uint32_t code) {
  if (code < 0x80) {  // the common case, without a search
    if ((code | 0x20) >= 'a' && (code | 0x20) <= 'z') return CharClass::kLetter;
    if (code >= '0' && code <= '9') return CharClass::kNumber;
    if (is_white_space(code)) return CharClass::kWhitespace;
    return CharClass::kOther;
  }
  if (in_ranges(kLetterRanges, code)) return CharClass::kLetter;
  if (in_ranges(kNumberRanges, code)) return CharClass::kNumber;
  if (is_white_space(code)) return CharClass::kWhitespace;
  return CharClass::kOther;
}

}  // namespace seqrt
