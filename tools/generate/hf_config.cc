#include "tools/generate/hf_config.h"

#include <fmt/format.h>

#include "tools/generate/json_fields.h"

namespace seqrt {
namespace {

constexpr uint64_t kMaxConfigBytes = uint64_t{16} << 20;

std::string beside(const std::string& path, const std::string& name) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? name : path.substr(0, slash + 1) + name;
}

// The file's JSON, or null when there is no such file.
Result<std::optional<nlohmann::json>> optional_json(const std::string& path) {
  Result<nlohmann::json> file = read_json_file(path, kMaxConfigBytes);
  if (!file.is_ok() && file.status().code() == StatusCode::kNotFound) {
    return std::optional<nlohmann::json>();
  }
  if (!file.is_ok()) return file.status();
  return std::optional<nlohmann::json>(std::move(*file));
}

// eos_token_id: an id or a list of ids.
Result<std::vector<int64_t>> eos_ids(const nlohmann::json& config,
                                     const std::string& path) {
  const nlohmann::json* field = find_field(config, "eos_token_id");
  if (field == nullptr) return std::vector<int64_t>();
  nlohmann::json list =
      field->is_array() ? *field : nlohmann::json::array({*field});
  std::vector<int64_t> ids;
  for (const nlohmann::json& id : list) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0) {
      return invalid_model(
          "'{}': eos_token_id must be a token id or a list of "
          "them, got {}",
          path, field->dump());
    }
    ids.push_back(id.get<int64_t>());
  }
  return ids;
}

Status find_eos(const std::string& model_path,
                const std::string& tokenizer_path, const HfTokenizer& tokenizer,
                GenerationConfig& config) {
  for (const char* name : {"generation_config.json", "config.json"}) {
    std::string path = beside(model_path, name);
    SEQRT_ASSIGN_OR_RETURN(std::optional<nlohmann::json> file,
                           optional_json(path));
    if (!file) continue;
    SEQRT_ASSIGN_OR_RETURN(config.eos_ids, eos_ids(*file, path));
    if (config.eos_ids.empty()) continue;
    config.eos_source = fmt::format("eos_token_id in '{}'", path);
    for (int64_t id : config.eos_ids) {
      if (id >= tokenizer.size()) {
        return invalid_model(
            "'{}': eos_token_id {} is past the {} tokens of "
            "tokenizer '{}'",
            path, id, tokenizer.size(), tokenizer_path);
      }
    }
    return Status::ok();
  }
  std::string path = beside(tokenizer_path, "tokenizer_config.json");
  SEQRT_ASSIGN_OR_RETURN(std::optional<nlohmann::json> file,
                         optional_json(path));
  if (file) {
    const nlohmann::json* eos = find_field(*file, "eos_token");
    std::optional<std::string> text;
    if (eos != nullptr && eos->is_string()) text = eos->get<std::string>();
    if (eos != nullptr && eos->is_object()) {
      SEQRT_ASSIGN_OR_RETURN(text,
                             optional_string(*eos, "content", "eos_token"));
    }
    if (text) {
      std::optional<int64_t> id = tokenizer.id_of(*text);
      if (!id) {
        return invalid_model("'{}': eos_token \"{}\" is not a token of '{}'",
                             path, *text, tokenizer_path);
      }
      config.eos_ids = {*id};
      config.eos_source = fmt::format("eos_token in '{}'", path);
      return Status::ok();
    }
  }
  const AddedToken* only = nullptr;
  int specials = 0;
  for (const AddedToken& token : tokenizer.added_tokens()) {
    if (!token.special) continue;
    ++specials;
    only = &token;
  }
  if (specials == 1) {
    config.eos_ids = {only->id};
    config.eos_source = fmt::format("the only special token of '{}', \"{}\"",
                                    tokenizer_path, only->content);
  }
  return Status::ok();
}

Status find_max_positions(const std::string& model_path,
                          GenerationConfig& config) {
  std::string path = beside(model_path, "config.json");
  SEQRT_ASSIGN_OR_RETURN(std::optional<nlohmann::json> file,
                         optional_json(path));
  if (!file) return Status::ok();
  for (const char* key : {"max_position_embeddings", "n_positions", "n_ctx"}) {
    Result<std::optional<int64_t>> value = optional_index(*file, key, "");
    if (!value.is_ok()) {
      return value.status().with_context(fmt::format("'{}'", path));
    }
    if (*value && **value > 0) {
      config.max_positions = **value;
      config.max_positions_source = fmt::format("{} in '{}'", key, path);
      return Status::ok();
    }
  }
  return Status::ok();
}

}  // namespace

Result<GenerationConfig> read_generation_config(
    const std::string& model_path, const std::string& tokenizer_path,
    const HfTokenizer& tokenizer) {
  GenerationConfig config;
  SEQRT_RETURN_IF_ERROR(
      find_eos(model_path, tokenizer_path, tokenizer, config));
  SEQRT_RETURN_IF_ERROR(find_max_positions(model_path, config));
  return config;
}

}  // namespace seqrt
