#include "runtime/cuda_plugin.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include "backends/cuda/plugin_abi.h"

namespace seqrt {
namespace {

// Set by backends/cuda/CMakeLists.txt when the plugin is part of the build.
#ifdef SEQRT_CUDA_PLUGIN_BUILD_PATH
constexpr const char* kBuildTreePlugin = SEQRT_CUDA_PLUGIN_BUILD_PATH;
#else
constexpr const char* kBuildTreePlugin = "";
#endif

bool is_file(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

std::string folder_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// The file this function's code was loaded from: libseqrt.so, or the
// program itself when the runtime is linked in statically.
std::string own_binary() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&own_binary), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "";
  }
  return info.dli_fname;
}

// dlopen handles by path; never closed, since backends and executables
// made by a plugin run its code until the process ends.
std::mutex& handles_mutex() {
  static std::mutex mutex;
  return mutex;
}

Result<void*> open_plugin(const std::string& path) {
  std::lock_guard<std::mutex> lock(handles_mutex());
  static std::map<std::string, void*> handles;
  auto it = handles.find(path);
  if (it != handles.end()) return it->second;
  // RTLD_LOCAL: the plugin's copies of seqrt's static code and of the CUDA
  // runtime stay private to it.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return unsupported("cuda backend: cannot load the plugin {}: {}", path,
                       why != nullptr ? why : "unknown dlopen error");
  }
  handles[path] = handle;
  return handle;
}

// The NVIDIA driver's library, looked for before the plugin is loaded: on
// a machine without it the plugin (and the cuBLASLt it pulls in) is never
// mapped, which keeps creating the backend there cheap. The handle stays
// open; the plugin's CUDA runtime opens the same library.
Status check_driver() {
  static const std::string error = [] {
    if (dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL) != nullptr) {
      return std::string();
    }
    const char* why = dlerror();
    return std::string(why != nullptr ? why : "libcuda.so.1 not found");
  }();
  if (error.empty()) return Status::ok();
  return no_device("cuda backend: no CUDA driver ({})", error);
}

}  // namespace

bool cuda_plugin_built() { return kBuildTreePlugin[0] != '\0'; }

std::vector<std::string> cuda_plugin_search_paths() {
  const char* env = std::getenv("SEQRT_CUDA_PLUGIN");
  if (env != nullptr && env[0] != '\0') return {env};
  std::vector<std::string> paths;
  std::string binary = own_binary();
  if (!binary.empty()) {
    std::string folder = folder_of(binary);
    paths.push_back(folder + "/" + kCudaPluginFileName);
    paths.push_back(folder + "/../lib/" + kCudaPluginFileName);
  }
  if (cuda_plugin_built()) paths.push_back(kBuildTreePlugin);
  return paths;
}

Result<std::unique_ptr<Backend>> load_cuda_backend_from(
    const std::string& path, const BackendOptions& options) {
  SEQRT_ASSIGN_OR_RETURN(void* handle, open_plugin(path));
  void* symbol = dlsym(handle, cuda_plugin::kEntryName);
  if (symbol == nullptr) {
    return unsupported(
        "cuda backend: {} is not a seqrt CUDA plugin (no symbol {})", path,
        cuda_plugin::kEntryName);
  }
  auto create = reinterpret_cast<cuda_plugin::CreateFn>(symbol);
  cuda_plugin::AbiRecord abi;
  abi.options = &options;
  cuda_plugin::CreateResult result;
  create(&abi, &result);
  if (result.backend == nullptr) {
    result.message[sizeof(result.message) - 1] = '\0';
    StatusCode code = static_cast<StatusCode>(result.status_code);
    if (code == StatusCode::kOk) code = StatusCode::kInternal;
    return Status(code, result.message);
  }
  return std::unique_ptr<Backend>(result.backend);
}

Result<std::unique_ptr<Backend>> load_cuda_backend(
    const BackendOptions& options) {
  std::vector<std::string> paths = cuda_plugin_search_paths();
  for (const std::string& path : paths) {
    if (!is_file(path)) continue;
    SEQRT_RETURN_IF_ERROR(check_driver());
    return load_cuda_backend_from(path, options);
  }
  return unsupported(
      "cuda backend: plugin {} not found (looked at {}); build seqrt with "
      "nvcc on the PATH or set SEQRT_CUDA_PLUGIN",
      kCudaPluginFileName, fmt::join(paths, ", "));
}

}  // namespace seqrt
