#include "tools/generate/byte_level.h"

#include "tools/generate/unicode_class.h"

namespace seqrt {
namespace {

// The end (exclusive) of the regex's match that starts at point `i` of the
// `n` points of `p` (p[n] is the end sentinel).
size_t match_end(const std::vector<CodePoint>& p, size_t i, size_t n) {
  auto at = [&](size_t k) { return k < n ? p[k].value : 0u; };
  if (at(i) == '\'') {  // 's 't 'm 'd, then 're 've 'll (case-sensitive)
    uint32_t a = at(i + 1), b = at(i + 2);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') ||
        (a == 'l' && b == 'l')) {
      return i + 3;
    }
  }
  // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: an optional space, then a
  // run of one class.
  size_t start = at(i) == ' ' && i + 1 < n ? i + 1 : i;
  CharClass run = char_class(at(start));
  if (run != CharClass::kWhitespace) {
    size_t end = start + 1;
    while (end < n && char_class(p[end].value) == run) ++end;
    return end;
  }
  // `\s+(?!\S)` takes a whitespace run but its last character when a
  // non-space follows (that one leads the next word); `\s+` takes a single
  // one.
  size_t end = i;
  while (end < n && char_class(p[end].value) == CharClass::kWhitespace) ++end;
  if (end == n || end - i == 1) return end;
  return end - 1;
}

}  // namespace

Result<std::vector<std::string_view>> split_gpt2(std::string_view text) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<CodePoint> points, decode_utf8(text));
  size_t n = points.size() - 1;
  std::vector<std::string_view> words;
  for (size_t i = 0; i < n;) {
    size_t end = match_end(points, i, n);
    words.push_back(
        text.substr(points[i].offset, points[end].offset - points[i].offset));
    i = end;
  }
  return words;
}

ByteLevelMap::ByteLevelMap() {
  // Printable bytes stand for themselves; the others (controls, space,
  // 0x7F-0xA0, 0xAD) take the code points from 256 on, in byte order.
  uint32_t next = 256;
  for (uint32_t byte = 0; byte < 256; ++byte) {
    bool printable = (byte >= '!' && byte <= '~') ||
                     (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE;
    if (!printable)
      byte_of_moved_[next - 256] = static_cast<unsigned char>(byte);
    char_of_byte_[byte] = printable ? byte : next++;
  }
}

std::string ByteLevelMap::encode(std::string_view bytes) const {
  std::string mapped;
  mapped.reserve(bytes.size() * 2);
  for (char byte : bytes) {
    append_utf8(char_of_byte_[static_cast<unsigned char>(byte)], mapped);
  }
  return mapped;
}

std::optional<std::string> ByteLevelMap::decode(std::string_view mapped) const {
  Result<std::vector<CodePoint>> points = decode_utf8(mapped);
  if (!points.is_ok()) return std::nullopt;
  std::string bytes;
  for (size_t i = 0; i + 1 < points->size(); ++i) {
    uint32_t code = (*points)[i].value;
    if (code < 256 && char_of_byte_[code] == code) {
      bytes += static_cast<char>(code);
    } else if (code >= 256 && code < 256 + kMoved) {
      bytes += static_cast<char>(byte_of_moved_[code - 256]);
    } else {
      return std::nullopt;
    }
  }
  return bytes;
}

}  // namespace seqrt
