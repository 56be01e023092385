#include "tools/generate/char_tokenizer.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace seqrt {
namespace {

// Bytes of the UTF-8 sequence that starts with `lead`, 0 if it cannot start
// one.
int utf8_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 0;
}

// How a character shows in a message: printable ASCII as is, else U+XXXX.
std::string describe(const std::string& character) {
  if (character.size() == 1 && character[0] >= ' ' && character[0] <= '~') {
    return fmt::format("'{}'", character);
  }
  uint32_t code = static_cast<unsigned char>(character[0]);
  int length = utf8_length(static_cast<unsigned char>(character[0]));
  if (length > 1) code &= 0x7F >> length;
  for (size_t i = 1; i < character.size(); ++i) {
    code = (code << 6) | (static_cast<unsigned char>(character[i]) & 0x3F);
  }
  return fmt::format("U+{:04X}", code);
}

}  // namespace

Result<std::vector<std::string>> split_utf8(const std::string& text) {
  std::vector<std::string> chars;
  for (size_t i = 0; i < text.size();) {
    int length = utf8_length(static_cast<unsigned char>(text[i]));
    bool valid = length > 0 && i + length <= text.size();
    for (int k = 1; valid && k < length; ++k) {
      valid = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    }
    if (!valid) return invalid_argument("invalid UTF-8 at byte {}", i);
    chars.push_back(text.substr(i, length));
    i += length;
  }
  return chars;
}

Result<std::vector<std::string>> parse_json_strings(const std::string& json) {
  // No exceptions: a parse error gives a discarded value.
  nlohmann::json parsed = nlohmann::json::parse(json, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_array()) {
    return invalid_model("expected a JSON list of strings");
  }
  std::vector<std::string> items;
  for (const nlohmann::json& item : parsed) {
    if (!item.is_string()) {
      return invalid_model("entry {} of the JSON list is not a string",
                           items.size());
    }
    items.push_back(item.get<std::string>());
  }
  return items;
}

Result<CharTokenizer> CharTokenizer::from_metadata(
    const std::map<std::string, std::string>& metadata,
    const std::string& model) {
  auto kind = metadata.find(kTokenizerKey);
  auto vocab = metadata.find(kVocabKey);
  if (kind == metadata.end() || vocab == metadata.end()) {
    return invalid_model(
        "model '{}' has no tokenizer: generate needs the metadata entries "
        "'{}' = \"char\" and '{}' (a JSON list of its characters)",
        model, kTokenizerKey, kVocabKey);
  }
  if (kind->second != "char") {
    return unsupported(
        "model '{}': tokenizer '{}' is not supported, only "
        "\"char\"",
        model, kind->second);
  }
  Result<std::vector<std::string>> chars = parse_json_strings(vocab->second);
  if (!chars.is_ok()) {
    return chars.status().with_context(
        fmt::format("model '{}', metadata '{}'", model, kVocabKey));
  }
  CharTokenizer tokenizer;
  for (const std::string& entry : *chars) {
    Result<std::vector<std::string>> points = split_utf8(entry);
    if (!points.is_ok() || points->size() != 1) {
      return invalid_model(
          "model '{}', metadata '{}': entry {} is not one character", model,
          kVocabKey, tokenizer.chars_.size());
    }
    int64_t id = static_cast<int64_t>(tokenizer.chars_.size());
    if (!tokenizer.ids_.emplace(entry, id).second) {
      return invalid_model("model '{}', metadata '{}': {} appears twice", model,
                           kVocabKey, describe(entry));
    }
    tokenizer.chars_.push_back(entry);
  }
  if (tokenizer.chars_.empty()) {
    return invalid_model("model '{}', metadata '{}': the vocabulary is empty",
                         model, kVocabKey);
  }
  return tokenizer;
}

Result<std::vector<int64_t>> CharTokenizer::encode(
    const std::string& text) const {
  SEQRT_ASSIGN_OR_RETURN(std::vector<std::string> chars, split_utf8(text));
  std::vector<int64_t> ids;
  for (size_t i = 0; i < chars.size(); ++i) {
    auto found = ids_.find(chars[i]);
    if (found == ids_.end()) {
      return invalid_argument(
          "character {} (number {} of the prompt) is not in the model's "
          "vocabulary of {} characters",
          describe(chars[i]), i + 1, chars_.size());
    }
    ids.push_back(found->second);
  }
  return ids;
}

}  // namespace seqrt
