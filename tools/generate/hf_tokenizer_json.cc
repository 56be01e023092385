// Reading tokenizer.json into an HfTokenizer: each component is checked
// against what hf_tokenizer.h supports, and anything else is refused with
// its place in the file ("pre_tokenizer.type 'Split' is not supported").
#include <algorithm>

#include <fmt/format.h>

#include "tools/generate/hf_tokenizer.h"
#include "tools/generate/json_fields.h"

namespace seqrt {
namespace {

using json = nlohmann::json;
using NormalizerStep = HfTokenizer::NormalizerStep;
using PreTokenizer = HfTokenizer::PreTokenizer;
using DecoderStep = HfTokenizer::DecoderStep;

// A tokenizer.json of a large vocabulary is tens of MB.
constexpr uint64_t kMaxTokenizerBytes = uint64_t{1} << 30;

Status not_supported(const std::string& where, const std::string& type,
                     const char* supported) {
  return unsupported("{}.type '{}' is not supported (supported: {})", where,
                     type, supported);
}

// Sequences inside Sequences: real files nest one level; a bound keeps a
// crafted file from exhausting the stack.
constexpr int kMaxNesting = 8;

Status check_depth(int depth, const std::string& where) {
  if (depth < kMaxNesting) return Status::ok();
  return invalid_model("{}: Sequences nested more than {} deep", where,
                       kMaxNesting);
}

// The members of a Sequence component: `object[key]`, a list.
Result<const json*> members(const json& object, const char* key,
                            const std::string& where) {
  const json* list = find_field(object, key);
  if (list == nullptr || !list->is_array()) {
    return invalid_model("{}.{} must be a list", where, key);
  }
  return list;
}

// A Replace pattern: {"String": "..."}; {"Regex": ...} is refused.
Result<std::string> string_pattern(const json& object,
                                   const std::string& where) {
  const json* pattern = find_field(object, "pattern");
  if (pattern != nullptr && find_field(*pattern, "Regex") != nullptr) {
    return unsupported(
        "{}.pattern: a Regex pattern is not supported, only "
        "{{\"String\": ...}}",
        where);
  }
  if (pattern == nullptr) return invalid_model("{}.pattern is missing", where);
  return required_string(*pattern, "String", where + ".pattern");
}

Status read_normalizer(const json& node, const std::string& where,
                       std::vector<NormalizerStep>& steps, int depth = 0) {
  SEQRT_ASSIGN_OR_RETURN(std::string type,
                         required_string(node, "type", where));
  if (type == "Sequence") {
    SEQRT_RETURN_IF_ERROR(check_depth(depth, where));
    SEQRT_ASSIGN_OR_RETURN(const json* list,
                           members(node, "normalizers", where));
    for (size_t i = 0; i < list->size(); ++i) {
      SEQRT_RETURN_IF_ERROR(read_normalizer(
          (*list)[i], fmt::format("{}.normalizers[{}]", where, i), steps,
          depth + 1));
    }
    return Status::ok();
  }
  NormalizerStep step;
  if (type == "Prepend") {
    SEQRT_ASSIGN_OR_RETURN(step.prepend,
                           required_string(node, "prepend", where));
  } else if (type == "Replace") {
    SEQRT_ASSIGN_OR_RETURN(step.pattern, string_pattern(node, where));
    SEQRT_ASSIGN_OR_RETURN(step.content,
                           required_string(node, "content", where));
    if (step.pattern.empty()) {
      return invalid_model("{}.pattern must not be empty", where);
    }
  } else {
    return not_supported(where, type, "Prepend, Replace, Sequence");
  }
  steps.push_back(std::move(step));
  return Status::ok();
}

// Metaspace's prepend_scheme, or the older add_prefix_space.
Result<HfTokenizer::Prepend> prepend_scheme(const json& node,
                                            const std::string& where) {
  SEQRT_ASSIGN_OR_RETURN(std::optional<std::string> scheme,
                         optional_string(node, "prepend_scheme", where));
  if (!scheme) {
    SEQRT_ASSIGN_OR_RETURN(
        bool add, optional_bool(node, "add_prefix_space", where, true));
    return add ? HfTokenizer::Prepend::kAlways : HfTokenizer::Prepend::kNever;
  }
  if (*scheme == "always") return HfTokenizer::Prepend::kAlways;
  if (*scheme == "first") return HfTokenizer::Prepend::kFirst;
  if (*scheme == "never") return HfTokenizer::Prepend::kNever;
  return invalid_model(
      "{}.prepend_scheme '{}' is not one of always, first, never", where,
      *scheme);
}

Result<PreTokenizer> read_pre_tokenizer(const json* node) {
  PreTokenizer pre;
  if (node == nullptr) return pre;
  const std::string where = "pre_tokenizer";
  SEQRT_ASSIGN_OR_RETURN(std::string type,
                         required_string(*node, "type", where));
  if (type == "ByteLevel") {
    pre.kind = PreTokenizer::Kind::kByteLevel;
    SEQRT_ASSIGN_OR_RETURN(
        pre.add_prefix_space,
        optional_bool(*node, "add_prefix_space", where, true));
    SEQRT_ASSIGN_OR_RETURN(pre.use_regex,
                           optional_bool(*node, "use_regex", where, true));
  } else if (type == "Metaspace") {
    pre.kind = PreTokenizer::Kind::kMetaspace;
    SEQRT_ASSIGN_OR_RETURN(pre.replacement,
                           required_string(*node, "replacement", where));
    SEQRT_ASSIGN_OR_RETURN(pre.prepend, prepend_scheme(*node, where));
    SEQRT_ASSIGN_OR_RETURN(pre.split,
                           optional_bool(*node, "split", where, true));
    if (pre.replacement.empty()) {
      return invalid_model("{}.replacement must not be empty", where);
    }
  } else {
    return not_supported(where, type, "ByteLevel, Metaspace");
  }
  return pre;
}

Status read_decoder(const json& node, const std::string& where,
                    std::vector<DecoderStep>& steps, int depth = 0) {
  SEQRT_ASSIGN_OR_RETURN(std::string type,
                         required_string(node, "type", where));
  if (type == "Sequence") {
    SEQRT_RETURN_IF_ERROR(check_depth(depth, where));
    SEQRT_ASSIGN_OR_RETURN(const json* list, members(node, "decoders", where));
    for (size_t i = 0; i < list->size(); ++i) {
      SEQRT_RETURN_IF_ERROR(
          read_decoder((*list)[i], fmt::format("{}.decoders[{}]", where, i),
                       steps, depth + 1));
    }
    return Status::ok();
  }
  DecoderStep step{DecoderStep::Kind::kFuse};
  if (type == "ByteLevel") {
    step.kind = DecoderStep::Kind::kByteLevel;
  } else if (type == "ByteFallback") {
    step.kind = DecoderStep::Kind::kByteFallback;
  } else if (type == "Fuse") {
    step.kind = DecoderStep::Kind::kFuse;
  } else if (type == "Replace") {
    step.kind = DecoderStep::Kind::kReplace;
    SEQRT_ASSIGN_OR_RETURN(step.pattern, string_pattern(node, where));
    SEQRT_ASSIGN_OR_RETURN(step.content,
                           required_string(node, "content", where));
    if (step.pattern.empty()) {
      return invalid_model("{}.pattern must not be empty", where);
    }
  } else if (type == "Strip") {
    step.kind = DecoderStep::Kind::kStrip;
    SEQRT_ASSIGN_OR_RETURN(step.content,
                           required_string(node, "content", where));
    SEQRT_ASSIGN_OR_RETURN(std::optional<int64_t> start,
                           optional_index(node, "start", where));
    step.start = start.value_or(0);
  } else if (type == "Metaspace") {
    step.kind = DecoderStep::Kind::kMetaspace;
    SEQRT_ASSIGN_OR_RETURN(step.pattern,
                           required_string(node, "replacement", where));
    SEQRT_ASSIGN_OR_RETURN(HfTokenizer::Prepend prepend,
                           prepend_scheme(node, where));
    step.strip_first = prepend != HfTokenizer::Prepend::kNever;
  } else {
    return not_supported(
        where, type,
        "ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip, Sequence");
  }
  steps.push_back(std::move(step));
  return Status::ok();
}

// The ids of TemplateProcessing's special token `name`.
Result<std::vector<int64_t>> template_ids(const json& node,
                                          const std::string& name,
                                          const std::string& where) {
  const json* specials = find_field(node, "special_tokens");
  const json* entry = specials ? find_field(*specials, name) : nullptr;
  const json* ids = entry ? find_field(*entry, "ids") : nullptr;
  if (ids == nullptr || !ids->is_array()) {
    return invalid_model("{}.special_tokens[\"{}\"].ids is missing", where,
                         name);
  }
  std::vector<int64_t> found;
  for (const json& id : *ids) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0) {
      return invalid_model("{}.special_tokens[\"{}\"].ids holds {}", where,
                           name, id.dump());
    }
    found.push_back(id.get<int64_t>());
  }
  return found;
}

// TemplateProcessing's `single`: special tokens before and after $A.
Status read_template(const json& node, const std::string& where,
                     std::vector<int64_t>& prefix,
                     std::vector<int64_t>& suffix) {
  const json* single = find_field(node, "single");
  if (single == nullptr || !single->is_array()) {
    return invalid_model("{}.single must be a list", where);
  }
  bool seen_sequence = false;
  for (size_t i = 0; i < single->size(); ++i) {
    const json& item = (*single)[i];
    std::string at = fmt::format("{}.single[{}]", where, i);
    if (const json* special = find_field(item, "SpecialToken")) {
      SEQRT_ASSIGN_OR_RETURN(std::string name,
                             required_string(*special, "id", at));
      SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                             template_ids(node, name, where));
      std::vector<int64_t>& into = seen_sequence ? suffix : prefix;
      into.insert(into.end(), ids.begin(), ids.end());
    } else if (const json* sequence = find_field(item, "Sequence")) {
      SEQRT_ASSIGN_OR_RETURN(std::string name,
                             required_string(*sequence, "id", at));
      if (name != "A" || seen_sequence) {
        return unsupported("{}: only one sequence, $A, is supported", at);
      }
      seen_sequence = true;
    } else {
      return invalid_model("{} must be a SpecialToken or a Sequence", at);
    }
  }
  if (!seen_sequence) return invalid_model("{} has no $A", where);
  return Status::ok();
}

Status read_post_processor(const json& node, const std::string& where,
                           std::vector<int64_t>& prefix,
                           std::vector<int64_t>& suffix, int depth = 0) {
  SEQRT_ASSIGN_OR_RETURN(std::string type,
                         required_string(node, "type", where));
  if (type == "Sequence") {
    SEQRT_RETURN_IF_ERROR(check_depth(depth, where));
    SEQRT_ASSIGN_OR_RETURN(const json* list,
                           members(node, "processors", where));
    for (size_t i = 0; i < list->size(); ++i) {
      SEQRT_RETURN_IF_ERROR(read_post_processor(
          (*list)[i], fmt::format("{}.processors[{}]", where, i), prefix,
          suffix, depth + 1));
    }
    return Status::ok();
  }
  if (type == "ByteLevel") return Status::ok();  // offsets only
  if (type == "TemplateProcessing") {
    return read_template(node, where, prefix, suffix);
  }
  return not_supported(where, type, "ByteLevel, TemplateProcessing, Sequence");
}

Result<std::vector<AddedToken>> read_added_tokens(const json* list) {
  std::vector<AddedToken> added;
  if (list == nullptr) return added;
  if (!list->is_array()) return invalid_model("added_tokens must be a list");
  for (size_t i = 0; i < list->size(); ++i) {
    const json& entry = (*list)[i];
    std::string where = fmt::format("added_tokens[{}]", i);
    AddedToken token;
    SEQRT_ASSIGN_OR_RETURN(std::optional<int64_t> id,
                           optional_index(entry, "id", where));
    if (!id) return invalid_model("{}.id is missing", where);
    token.id = *id;
    SEQRT_ASSIGN_OR_RETURN(token.content,
                           required_string(entry, "content", where));
    if (token.content.empty()) {
      return invalid_model("{}.content is empty", where);
    }
    SEQRT_ASSIGN_OR_RETURN(token.special,
                           optional_bool(entry, "special", where, false));
    SEQRT_ASSIGN_OR_RETURN(token.lstrip,
                           optional_bool(entry, "lstrip", where, false));
    SEQRT_ASSIGN_OR_RETURN(token.rstrip,
                           optional_bool(entry, "rstrip", where, false));
    SEQRT_ASSIGN_OR_RETURN(token.single_word,
                           optional_bool(entry, "single_word", where, false));
    added.push_back(std::move(token));
  }
  // Longest first: at one place the longest added token matches.
  std::stable_sort(added.begin(), added.end(),
                   [](const AddedToken& a, const AddedToken& b) {
                     return a.content.size() > b.content.size();
                   });
  return added;
}

}  // namespace

Result<HfTokenizer> HfTokenizer::load(const std::string& path) {
  Result<nlohmann::json> file = read_json_file(path, kMaxTokenizerBytes);
  Result<HfTokenizer> tokenizer =
      file.is_ok() ? from_json(*file) : Result<HfTokenizer>(file.status());
  if (!tokenizer.is_ok()) {
    return tokenizer.status().with_context(
        fmt::format("tokenizer file '{}'", path));
  }
  return tokenizer;
}

Result<HfTokenizer> HfTokenizer::from_json(const nlohmann::json& file) {
  if (!file.is_object()) {
    return invalid_model("expected a JSON object (a tokenizer.json)");
  }
  const json* model = find_field(file, "model");
  if (model == nullptr || !model->is_object()) {
    return invalid_model("model is missing: not a tokenizer.json");
  }
  SEQRT_ASSIGN_OR_RETURN(std::string type,
                         required_string(*model, "type", "model"));
  if (type != "BPE") return not_supported("model", type, "BPE");
  SEQRT_ASSIGN_OR_RETURN(BpeModel bpe, BpeModel::from_json(*model));
  HfTokenizer tokenizer(std::move(bpe));
  SEQRT_ASSIGN_OR_RETURN(tokenizer.added_,
                         read_added_tokens(find_field(file, "added_tokens")));
  const int64_t limit = max_token_id(
      tokenizer.model_.size() + static_cast<int64_t>(tokenizer.added_.size()));
  for (size_t i = 0; i < tokenizer.added_.size(); ++i) {
    if (tokenizer.added_[i].id > limit) {
      return invalid_model(
          "added token \"{}\" has id {}, past {} (twice the tokens, plus 256)",
          tokenizer.added_[i].content, tokenizer.added_[i].id, limit);
    }
    // An id given to two added tokens decodes as the longer.
    tokenizer.added_index_.emplace(tokenizer.added_[i].id, i);
  }
  if (const json* node = find_field(file, "normalizer")) {
    SEQRT_RETURN_IF_ERROR(
        read_normalizer(*node, "normalizer", tokenizer.normalizer_));
  }
  SEQRT_ASSIGN_OR_RETURN(tokenizer.pre_tokenizer_,
                         read_pre_tokenizer(find_field(file, "pre_tokenizer")));
  if (const json* node = find_field(file, "post_processor")) {
    SEQRT_RETURN_IF_ERROR(read_post_processor(
        *node, "post_processor", tokenizer.prefix_, tokenizer.suffix_));
  }
  if (const json* node = find_field(file, "decoder")) {
    SEQRT_RETURN_IF_ERROR(read_decoder(*node, "decoder", tokenizer.decoder_));
  }
  std::vector<int64_t> added_ids = tokenizer.prefix_;
  added_ids.insert(added_ids.end(), tokenizer.suffix_.begin(),
                   tokenizer.suffix_.end());
  for (int64_t id : added_ids) {
    if (id >= tokenizer.size()) {
      return invalid_model(
          "post_processor adds token id {}, past the {} "
          "tokens of the vocabulary",
          id, tokenizer.size());
    }
  }
  for (int64_t id = 0; id < tokenizer.size(); ++id) {
    tokenizer.max_token_bytes_ =
        std::max(tokenizer.max_token_bytes_,
                 static_cast<int64_t>(tokenizer.decode_token(id).size()));
  }
  return tokenizer;
}

}  // namespace seqrt
