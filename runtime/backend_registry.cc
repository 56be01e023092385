#include "runtime/backend_registry.h"

#include <fmt/format.h>

#include "backends/reference/reference_backend.h"
#include "runtime/cuda_plugin.h"
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
  std::unique_ptr<Backend> (*create)();
  // Set instead of `create` by backends whose device may be missing.
  Result<std::unique_ptr<Backend>> (*create_checked)() = nullptr;
};

// One line per backend compiled into this build (CMake options
// SEQRT_BACKEND_*); later backends add theirs behind their macro.
const std::vector<BackendEntry>& entries() {
  static const std::vector<BackendEntry> list = {
      {"reference", &create_reference_backend},
#ifdef SEQRT_HAVE_CPU_BACKEND
      {"cpu", &create_cpu_backend},
#endif
#ifdef SEQRT_HAVE_VULKAN_BACKEND
      {"vulkan", nullptr, &create_vulkan_backend_from_env},
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

Result<std::unique_ptr<Backend>> create_backend(const std::string& name) {
  if (name == "cuda") return load_cuda_backend();
  for (const BackendEntry& entry : entries()) {
    if (name != entry.name) continue;
    if (entry.create_checked != nullptr) return entry.create_checked();
    return entry.create();
  }
  return not_found("no backend '{}' in this build; available: {}", name,
                   fmt::join(compiled_backends(), ", "));
}

}  // namespace seqrt
