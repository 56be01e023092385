#include "tools/generate/hf_tokenizer.h"

#include <algorithm>

#include <fmt/format.h>

namespace seqrt {
namespace {

void replace_all(std::string& text, const std::string& pattern,
                 const std::string& content) {
  std::string out;
  size_t from = 0;
  for (size_t at; (at = text.find(pattern, from)) != std::string::npos;) {
    out.append(text, from, at - from);
    out += content;
    from = at + pattern.size();
  }
  if (from == 0) return;
  out.append(text, from, std::string::npos);
  text = std::move(out);
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f';
}

// A word character for single_word added tokens: ASCII letters, digits
// and '_', and every byte of a non-ASCII character.
bool is_word_byte(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  return u >= 0x80 || c == '_' || (c >= '0' && c <= '9') ||
         ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

// `text` cut before each `delimiter`, which starts the next word
// (the library's MergedWithNext).
std::vector<std::string> split_before(const std::string& text,
                                      const std::string& delimiter) {
  std::vector<std::string> words;
  size_t start = 0;
  for (size_t at = text.find(delimiter, 1); at != std::string::npos;
       at = text.find(delimiter, at + delimiter.size())) {
    words.push_back(text.substr(start, at - start));
    start = at;
  }
  words.push_back(text.substr(start));
  return words;
}

// The byte of a byte-fallback token "<0xHH>", or -1.
int fallback_byte(const std::string& token) {
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') {
    return -1;
  }
  int value = 0;
  for (int k = 3; k < 5; ++k) {
    char c = token[k];
    int digit = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

}  // namespace

int64_t HfTokenizer::size() const {
  int64_t size = model_.size();
  for (const AddedToken& token : added_) size = std::max(size, token.id + 1);
  return size;
}

const AddedToken* HfTokenizer::added_by_id(int64_t id) const {
  auto found = added_index_.find(id);
  return found == added_index_.end() ? nullptr : &added_[found->second];
}

std::optional<int64_t> HfTokenizer::id_of(const std::string& token) const {
  for (const AddedToken& added : added_) {
    if (added.content == token) return added.id;
  }
  return model_.id_of(token);
}

std::vector<HfTokenizer::Piece> HfTokenizer::split_added(
    const std::string& text) const {
  std::vector<Piece> pieces;
  size_t start = 0;  // of the text not yet in a piece
  for (size_t i = 0; i < text.size();) {
    const AddedToken* match = nullptr;
    for (const AddedToken& token : added_) {
      if (text.compare(i, token.content.size(), token.content) != 0) continue;
      size_t end = i + token.content.size();
      if (token.single_word &&
          ((i > 0 && is_word_byte(text[i - 1])) ||
           (end < text.size() && is_word_byte(text[end])))) {
        continue;
      }
      match = &token;
      break;
    }
    if (match == nullptr) {
      ++i;
      continue;
    }
    size_t begin = i, end = i + match->content.size();
    if (match->lstrip) {
      while (begin > start && is_space(text[begin - 1])) --begin;
    }
    if (match->rstrip) {
      while (end < text.size() && is_space(text[end])) ++end;
    }
    if (begin > start)
      pieces.push_back({text.substr(start, begin - start), -1, start});
    pieces.push_back({std::string(), match->id, begin});
    start = i = end;
  }
  if (start < text.size()) pieces.push_back({text.substr(start), -1, start});
  return pieces;
}

Status HfTokenizer::encode_piece(const Piece& piece,
                                 std::vector<int64_t>& ids) const {
  if (piece.added >= 0) {
    ids.push_back(piece.added);
    return Status::ok();
  }
  std::string text = piece.text;
  for (const NormalizerStep& step : normalizer_) {
    if (!step.prepend.empty()) {
      if (!text.empty()) text = step.prepend + text;
    } else {
      replace_all(text, step.pattern, step.content);
    }
  }
  if (text.empty()) return Status::ok();
  std::vector<std::string> words;
  switch (pre_tokenizer_.kind) {
    case PreTokenizer::Kind::kNone:
      words.push_back(std::move(text));
      break;
    case PreTokenizer::Kind::kByteLevel: {
      if (pre_tokenizer_.add_prefix_space && text[0] != ' ') text = " " + text;
      std::vector<std::string_view> parts = {text};
      if (pre_tokenizer_.use_regex) {
        SEQRT_ASSIGN_OR_RETURN(parts, split_gpt2(text));
      }
      for (std::string_view part : parts)
        words.push_back(byte_map_.encode(part));
      break;
    }
    case PreTokenizer::Kind::kMetaspace: {
      const std::string& mark = pre_tokenizer_.replacement;
      replace_all(text, " ", mark);
      bool prepend =
          pre_tokenizer_.prepend == Prepend::kAlways ||
          (pre_tokenizer_.prepend == Prepend::kFirst && piece.offset == 0);
      if (prepend && !starts_with(text, mark)) text = mark + text;
      if (pre_tokenizer_.split) {
        words = split_before(text, mark);
      } else {
        words.push_back(std::move(text));
      }
      break;
    }
  }
  for (const std::string& word : words) {
    SEQRT_RETURN_IF_ERROR(model_.tokenize(word, ids));
  }
  return Status::ok();
}

Result<std::vector<int64_t>> HfTokenizer::encode(
    const std::string& text) const {
  std::vector<int64_t> ids = prefix_;
  for (const Piece& piece : split_added(text)) {
    Status status = encode_piece(piece, ids);
    if (!status.is_ok()) {
      return status.with_context(
          fmt::format("text at byte {} of the prompt", piece.offset));
    }
  }
  ids.insert(ids.end(), suffix_.begin(), suffix_.end());
  return ids;
}

std::string HfTokenizer::decode_one(int64_t id, bool first) const {
  if (const AddedToken* added = added_by_id(id)) return added->content;
  const std::string* token = model_.token_of(id);
  if (token == nullptr) return std::string();
  std::string text = *token;
  for (const DecoderStep& step : decoder_) {
    switch (step.kind) {
      case DecoderStep::Kind::kByteLevel:
        // A character outside the byte map stays as it is, as in the
        // library.
        if (std::optional<std::string> bytes = byte_map_.decode(text)) {
          text = std::move(*bytes);
        }
        break;
      case DecoderStep::Kind::kReplace:
        replace_all(text, step.pattern, step.content);
        break;
      case DecoderStep::Kind::kByteFallback:
        if (int byte = fallback_byte(text); byte >= 0) {
          text = std::string(1, static_cast<char>(byte));
        }
        break;
      case DecoderStep::Kind::kMetaspace:
        // The library drops every mark of the first token, not one space.
        replace_all(text, step.pattern, first && step.strip_first ? "" : " ");
        break;
      case DecoderStep::Kind::kFuse:   // joining is what streaming does
      case DecoderStep::Kind::kStrip:  // only at the start: decode()
        break;
    }
  }
  return text;
}

std::string HfTokenizer::decode_token(int64_t id) const {
  return decode_one(id, /*first=*/false);
}

std::string HfTokenizer::decode(const std::vector<int64_t>& ids,
                                bool skip_special) const {
  std::string text;
  bool first = true;
  for (int64_t id : ids) {
    const AddedToken* added = added_by_id(id);
    if (skip_special && added != nullptr && added->special) continue;
    text += decode_one(id, first);
    first = false;
  }
  // What the library's Strip cuts from the start (after Fuse, the whole
  // text is one token).
  for (const DecoderStep& step : decoder_) {
    if (step.kind != DecoderStep::Kind::kStrip) continue;
    for (int64_t k = 0; k < step.start && starts_with(text, step.content);
         ++k) {
      text.erase(0, step.content.size());
    }
  }
  return text;
}

}  // namespace seqrt
