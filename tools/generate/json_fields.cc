#include "tools/generate/json_fields.h"

#include <utility>

#include "graph/regular_file.h"
#include "tools/generate/bounded_read.h"

namespace seqrt {
namespace {

std::string dotted(const std::string& where, const std::string& key) {
  return where.empty() ? key : where + "." + key;
}

}  // namespace

Result<nlohmann::json> read_json_file(const std::string& path,
                                      uint64_t max_bytes) {
  SEQRT_ASSIGN_OR_RETURN(RegularFile file, RegularFile::open(path));
  if (file.size() > max_bytes) {
    return make_error(StatusCode::kLimitExceeded,
                      "file '{}' is {} bytes, more than the {} accepted", path,
                      file.size(), max_bytes);
  }
  SEQRT_ASSIGN_OR_RETURN(std::string text,
                         read_bounded(std::move(file), path, max_bytes));
  if (text.size() > max_bytes) {
    return make_error(StatusCode::kLimitExceeded,
                      "file '{}' grew past the {} bytes accepted", path,
                      max_bytes);
  }
  // The parser's exception is caught here, where its message (line and
  // column) becomes the error; none leaves this function.
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    return invalid_model("file '{}' is not valid JSON: {}", path, error.what());
  }
  return parsed;
}

const nlohmann::json* find_field(const nlohmann::json& object,
                                 const std::string& key) {
  if (!object.is_object()) return nullptr;
  auto found = object.find(key);
  if (found == object.end() || found->is_null()) return nullptr;
  return &*found;
}

Result<std::optional<std::string>> optional_string(const nlohmann::json& object,
                                                   const std::string& key,
                                                   const std::string& where) {
  const nlohmann::json* value = find_field(object, key);
  if (value == nullptr) return std::optional<std::string>();
  if (!value->is_string()) {
    return invalid_model("{} must be a string, got {}", dotted(where, key),
                         value->type_name());
  }
  return std::optional<std::string>(value->get<std::string>());
}

Result<std::string> required_string(const nlohmann::json& object,
                                    const std::string& key,
                                    const std::string& where) {
  SEQRT_ASSIGN_OR_RETURN(std::optional<std::string> value,
                         optional_string(object, key, where));
  if (!value) return invalid_model("{} is missing", dotted(where, key));
  return *value;
}

Result<bool> optional_bool(const nlohmann::json& object, const std::string& key,
                           const std::string& where, bool fallback) {
  const nlohmann::json* value = find_field(object, key);
  if (value == nullptr) return fallback;
  if (!value->is_boolean()) {
    return invalid_model("{} must be true or false, got {}", dotted(where, key),
                         value->type_name());
  }
  return value->get<bool>();
}

Result<std::optional<int64_t>> optional_index(const nlohmann::json& object,
                                              const std::string& key,
                                              const std::string& where) {
  const nlohmann::json* value = find_field(object, key);
  if (value == nullptr) return std::optional<int64_t>();
  if (!value->is_number_integer() || value->get<int64_t>() < 0 ||
      value->get<int64_t>() >= (int64_t{1} << 31)) {
    return invalid_model("{} must be an integer in [0, 2^31), got {}",
                         dotted(where, key), value->dump());
  }
  return std::optional<int64_t>(value->get<int64_t>());
}

}  // namespace seqrt
