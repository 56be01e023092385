#include "backends/vulkan/driver_pin.h"

#include <dlfcn.h>
#include <link.h>

namespace seqrt::vulkan {

std::set<std::string> loaded_libraries() {
  std::set<std::string> paths;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
          static_cast<std::set<std::string>*>(data)->insert(info->dlpi_name);
        }
        return 0;
      },
      &paths);
  return paths;
}

void keep_loaded_since(const std::set<std::string>& before) {
  for (const std::string& path : loaded_libraries()) {
    if (before.count(path) != 0) continue;
    // RTLD_NOLOAD only finds the loaded library; RTLD_NODELETE stays on it
    // after this reference is dropped again.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    if (handle != nullptr) dlclose(handle);
  }
}

}  // namespace seqrt::vulkan
