#include "runtime/backend_registry.h"

#include <fmt/format.h>

#include "backends/reference/reference_backend.h"
#ifdef SEQRT_HAVE_CPU_BACKEND
#include "backends/cpu/cpu_backend.h"
#endif

namespace seqrt {
namespace {

struct BackendEntry {
  const char* name;
  std::unique_ptr<Backend> (*create)();
};

// One line per backend compiled into this build (CMake options
// SEQRT_BACKEND_*); later backends add theirs behind their macro.
const std::vector<BackendEntry>& entries() {
  static const std::vector<BackendEntry> list = {
      {"reference", &create_reference_backend},
#ifdef SEQRT_HAVE_CPU_BACKEND
      {"cpu", &create_cpu_backend},
#endif
  };
  return list;
}

}  // namespace

std::vector<std::string> compiled_backends() {
  std::vector<std::string> names;
  for (const BackendEntry& entry : entries()) names.push_back(entry.name);
  return names;
}

Result<std::unique_ptr<Backend>> create_backend(const std::string& name) {
  for (const BackendEntry& entry : entries()) {
    if (name == entry.name) return entry.create();
  }
  return not_found("no backend '{}' in this build; available: {}", name,
                   fmt::join(compiled_backends(), ", "));
}

}  // namespace seqrt
