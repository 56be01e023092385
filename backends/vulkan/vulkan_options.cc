#include "backends/vulkan/vulkan_options.h"

#include <cstdlib>

#include "backends/vulkan/vulkan_backend.h"

namespace seqrt {

const std::vector<BackendOptionSpec>& vulkan_backend_option_specs() {
  static const std::vector<BackendOptionSpec> specs = {
      {"device", "an index in vkEnumeratePhysicalDevices order"},
      {"device_name", "a substring of the device's name"},
      {"forms", "auto, recurrent or chunked"},
      {"fp16_weights", "a boolean; needs 16-bit storage"},
      {"validation", "a boolean; needs VK_LAYER_KHRONOS_validation"},
  };
  return specs;
}

namespace vulkan {
namespace {

// Set and not empty: the variable overrides the option.
bool env_set(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0';
}

Result<SequenceForms> parse_forms(const std::string& text) {
  if (text == "auto") return SequenceForms::kAuto;
  if (text == "recurrent") return SequenceForms::kRecurrent;
  if (text == "chunked") return SequenceForms::kChunked;
  return invalid_argument(
      "vulkan backend: option forms must be auto, recurrent or chunked, got "
      "'{}'",
      text);
}

}  // namespace

Result<VulkanOptions> vulkan_options_from(const BackendOptions& options) {
  SEQRT_RETURN_IF_ERROR(check_backend_option_keys(
      "vulkan", options, vulkan_backend_option_specs()));
  auto other = [&](const char* key) -> const std::string* {
    auto it = options.other.find(key);
    return it == options.other.end() ? nullptr : &it->second;
  };
  VulkanOptions vulkan;
  const std::string* name = other("device_name");
  if (options.device && name != nullptr) {
    return invalid_argument(
        "vulkan backend: give option device or device_name, not both");
  }
  if (name != nullptr && name->empty()) {
    return invalid_argument("vulkan backend: option device_name is empty");
  }
  if (!env_set("SEQRT_VULKAN_DEVICE")) {
    vulkan.device_index = options.device.value_or(-1);
    if (name != nullptr) vulkan.device_name = *name;
  }
  if (!env_set("SEQRT_VULKAN_FP16_WEIGHTS")) {
    vulkan.fp16_weights = options.fp16_weights.value_or(false);
  }
  if (const std::string* forms = other("forms")) {
    SEQRT_ASSIGN_OR_RETURN(SequenceForms parsed, parse_forms(*forms));
    if (!env_set("SEQRT_VULKAN_FORMS")) vulkan.forms = parsed;
  }
  if (const std::string* validation = other("validation")) {
    SEQRT_ASSIGN_OR_RETURN(bool on,
                           parse_bool_option("validation", *validation));
    if (!env_set("SEQRT_VULKAN_VALIDATION")) vulkan.validation = on;
  }
  return vulkan;
}

}  // namespace vulkan
}  // namespace seqrt
