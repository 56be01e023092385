#include "backends/backend_options.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <fmt/format.h>

namespace seqrt {
namespace {

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(c));
  return text;
}

bool is_key(const std::string& key) {
  if (key.empty()) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

Result<int> parse_index(const std::string& key, const std::string& value) {
  bool digits = !value.empty() && value.size() <= 9 &&
                std::all_of(value.begin(), value.end(),
                            [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) {
    return invalid_argument(
        "backend option {} must be a device index (an integer >= 0), got "
        "'{}'",
        key, value);
  }
  return static_cast<int>(std::strtol(value.c_str(), nullptr, 10));
}

}  // namespace

Result<bool> parse_bool_option(const std::string& key,
                               const std::string& value) {
  const std::string text = lower(value);
  if (text == "1" || text == "true" || text == "on" || text == "yes") {
    return true;
  }
  if (text == "0" || text == "false" || text == "off" || text == "no") {
    return false;
  }
  return invalid_argument(
      "backend option {} must be a boolean (1, 0, true, false, on, off, yes, "
      "no), got '{}'",
      key, value);
}

Status BackendOptions::set(const std::string& key, const std::string& value) {
  const size_t dot = key.find('.');
  if (dot != std::string::npos && is_key(key.substr(0, dot))) {
    const std::string backend = key.substr(0, dot), own = key.substr(dot + 1);
    BackendOptions checked;  // the value must suit the key
    SEQRT_RETURN_IF_ERROR(checked.set(own, value));
    if (own.find('.') != std::string::npos) {
      return invalid_argument("backend option key '{}' names more than one "
                              "backend; give BACKEND.KEY",
                              key);
    }
    per_backend[backend][own] = value;
    return Status::ok();
  }
  if (!is_key(key)) {
    return invalid_argument(
        "backend option key '{}' is not a name (lower-case letters, digits "
        "and _)",
        key);
  }
  if (key == "device") {
    SEQRT_ASSIGN_OR_RETURN(int index, parse_index(key, value));
    device = index;
  } else if (key == "fp16_weights") {
    SEQRT_ASSIGN_OR_RETURN(bool on, parse_bool_option(key, value));
    fp16_weights = on;
  } else {
    other[key] = value;
  }
  return Status::ok();
}

Result<BackendOptions> options_for_backend(const BackendOptions& options,
                                           const std::vector<std::string>& names,
                                           size_t index) {
  for (const auto& [backend, keys] : options.per_backend) {
    if (std::find(names.begin(), names.end(), backend) == names.end()) {
      return invalid_argument(
          "backend option '{}.{}' is for backend '{}', which is not among "
          "the backends asked for ({})",
          backend, keys.begin()->first, backend, fmt::join(names, ","));
    }
  }
  BackendOptions own;
  if (index == 0) {
    own = options;
    own.per_backend.clear();
  }
  auto it = options.per_backend.find(names.at(index));
  if (it != options.per_backend.end()) {
    for (const auto& [key, value] : it->second) {
      SEQRT_RETURN_IF_ERROR(own.set(key, value));
    }
  }
  return own;
}

std::vector<std::string> BackendOptions::keys() const {
  std::vector<std::string> names;
  if (device) names.push_back("device");
  if (fp16_weights) names.push_back("fp16_weights");
  for (const auto& [key, value] : other) names.push_back(key);
  std::sort(names.begin(), names.end());
  return names;
}

Status check_backend_option_keys(
    const std::string& backend, const BackendOptions& options,
    const std::vector<BackendOptionSpec>& accepted) {
  for (const std::string& key : options.keys()) {
    bool known = std::any_of(
        accepted.begin(), accepted.end(),
        [&](const BackendOptionSpec& spec) { return key == spec.key; });
    if (known) continue;
    std::vector<std::string> listed;
    for (const BackendOptionSpec& spec : accepted) {
      listed.push_back(fmt::format("{} ({})", spec.key, spec.values));
    }
    return invalid_argument(
        "{} backend: no option '{}'; it takes: {}", backend, key,
        listed.empty() ? std::string("none")
                       : fmt::format("{}", fmt::join(listed, ", ")));
  }
  return Status::ok();
}

Status check_single_device(const std::string& backend,
                           const BackendOptions& options) {
  if (options.device.value_or(0) == 0) return Status::ok();
  return unsupported(
      "backend '{}' has one device (index 0); device index {} was asked for",
      backend, *options.device);
}

}  // namespace seqrt
