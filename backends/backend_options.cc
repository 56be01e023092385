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
