// Reading the JSON files of a Hugging Face export (tokenizer.json,
// config.json) without exceptions: nlohmann-json throws on a field of the
// wrong type, so every field is checked before it is read, and the error
// names where in the file it is (`where`, e.g. "model.unk_token").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "graph/status.h"

namespace seqrt {

// The JSON value in the regular file at `path` (at most `max_bytes`); the
// error names the file and, for bad JSON, the byte where parsing failed.
Result<nlohmann::json> read_json_file(const std::string& path,
                                      uint64_t max_bytes);

// `object[key]`, or null when `object` is not an object, or the key is
// absent or JSON null.
const nlohmann::json* find_field(const nlohmann::json& object,
                                 const std::string& key);

// Field readers: a missing or null field gives `fallback` (nullopt for the
// optional one); a field of another type is an error naming
// `where`.`key`.
Result<std::optional<std::string>> optional_string(const nlohmann::json& object,
                                                   const std::string& key,
                                                   const std::string& where);
Result<std::string> required_string(const nlohmann::json& object,
                                    const std::string& key,
                                    const std::string& where);
Result<bool> optional_bool(const nlohmann::json& object, const std::string& key,
                           const std::string& where, bool fallback);
// An integer in [0, 2^31): token ids and positions.
Result<std::optional<int64_t>> optional_index(const nlohmann::json& object,
                                              const std::string& key,
                                              const std::string& where);

}  // namespace seqrt
