#include "runtime/backend_registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "backends/cuda/plugin_abi.h"
#include "backends/reference/reference_backend.h"
#include "runtime/cuda_plugin.h"
#include "runtime/multi_backend.h"
#ifdef SEQRT_HAVE_CPU_BACKEND
#include "backends/cpu/cpu_backend.h"
#endif
#ifdef SEQRT_HAVE_VULKAN_BACKEND
#include "backends/vulkan/vulkan_backend.h"
#endif

namespace seqrt {
namespace {

struct BackendEntry {
  const char* name;
  Result<std::unique_ptr<Backend>> (*create)(const BackendOptions& options);
  const std::vector<BackendOptionSpec>& (*option_specs)();
};

// One line per backend compiled into this build (CMake options
// SEQRT_BACKEND_*); later backends add theirs behind their macro.
const std::vector<BackendEntry>& entries() {
  static const std::vector<BackendEntry> list = {
      {"reference", &create_reference_backend, &reference_backend_option_specs},
#ifdef SEQRT_HAVE_CPU_BACKEND
      {"cpu", &create_cpu_backend, &cpu_backend_option_specs},
#endif
#ifdef SEQRT_HAVE_VULKAN_BACKEND
      {"vulkan", &create_vulkan_backend, &vulkan_backend_option_specs},
#endif
  };
  return list;
}

}  // namespace

std::vector<std::string> compiled_backends() {
  std::vector<std::string> names;
  for (const BackendEntry& entry : entries()) names.push_back(entry.name);
  // CUDA is a plugin loaded at run time (runtime/cuda_plugin.h).
  if (cuda_plugin_built()) names.push_back("cuda");
  return names;
}

std::string default_backend() {
  for (const std::string& name : compiled_backends()) {
    if (name == "cpu") return name;
  }
  return "reference";
}

Result<std::unique_ptr<Backend>> create_backend(const std::string& name,
                                                const BackendOptions& options) {
  if (name.find(',') != std::string::npos) {
    return create_multi_backend(name, options);
  }
  SEQRT_ASSIGN_OR_RETURN(BackendOptions own,
                         options_for_backend(options, {name}, 0));
  if (name == "cuda") {
    // Checked here too, so that a bad key fails alike with no GPU.
    SEQRT_RETURN_IF_ERROR(check_backend_option_keys(
        "cuda", own, cuda_plugin::cuda_backend_option_specs()));
    return load_cuda_backend(own);
  }
  for (const BackendEntry& entry : entries()) {
    if (name == entry.name) return entry.create(own);
  }
  return not_found("no backend '{}' in this build; available: {}", name,
                   fmt::join(compiled_backends(), ", "));
}

std::vector<BackendOptionSpec> backend_option_specs(const std::string& name) {
  if (name == "cuda" && cuda_plugin_built()) {
    return cuda_plugin::cuda_backend_option_specs();
  }
  for (const BackendEntry& entry : entries()) {
    if (name == entry.name) return entry.option_specs();
  }
  return {};
}

Status set_backend_option(BackendOptions& options, const std::string& key,
                          const std::string& value) {
  const size_t dot = key.find('.');
  if (dot != std::string::npos) {
    // BACKEND.KEY: a key that backend takes.
    const std::string backend = key.substr(0, dot), own = key.substr(dot + 1);
    std::vector<std::string> names = compiled_backends();
    if (std::find(names.begin(), names.end(), backend) == names.end()) {
      return invalid_argument(
          "backend option '{}' names backend '{}', which is not in this "
          "build; available: {}",
          key, backend, fmt::join(names, ", "));
    }
    std::vector<std::string> keys;
    for (const BackendOptionSpec& spec : backend_option_specs(backend)) {
      keys.push_back(spec.key);
    }
    if (std::find(keys.begin(), keys.end(), own) == keys.end()) {
      return invalid_argument(
          "backend option '{}': the {} backend takes no option '{}'; it "
          "takes: {}",
          key, backend, own, fmt::join(keys, ", "));
    }
    return options.set(key, value);
  }
  std::set<std::string> known;
  for (const std::string& name : compiled_backends()) {
    for (const BackendOptionSpec& spec : backend_option_specs(name)) {
      known.insert(spec.key);
    }
  }
  if (known.count(key) == 0) {
    return invalid_argument(
        "no backend of this build takes option '{}'; the options are: {} "
        "(backends/README.md says which backend takes which)",
        key, fmt::join(known, ", "));
  }
  return options.set(key, value);
}

}  // namespace seqrt
