// The runtime's side of the CUDA plugin: found or not, loadable or not,
// the right ABI or not, with or without a driver and device — always one
// clear line, never a crash, and the CPU backend unaffected.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "runtime/backend_registry.h"
#include "runtime/cuda_plugin.h"

namespace seqrt {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

bool one_line(const std::string& text) {
  return !text.empty() && text.find('\n') == std::string::npos;
}

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old != nullptr) old_ = old;
    had_ = old != nullptr;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(CudaPlugin, ListedWhenBuilt) {
  EXPECT_TRUE(cuda_plugin_built());
  std::vector<std::string> names = compiled_backends();
  EXPECT_NE(std::find(names.begin(), names.end(), "cuda"), names.end());
  std::vector<std::string> paths = cuda_plugin_search_paths();
  EXPECT_EQ(paths.back(), SEQRT_CUDA_REAL_PLUGIN);
}

TEST(CudaPlugin, MissingPluginIsOneClearLine) {
  ScopedEnv env("SEQRT_CUDA_PLUGIN", "/nonexistent/libseqrt_cuda.so");
  Result<std::unique_ptr<Backend>> backend = create_backend("cuda");
  ASSERT_FALSE(backend.is_ok());
  EXPECT_EQ(backend.status().code(), StatusCode::kUnsupported);
  EXPECT_TRUE(contains(backend.status().message(), "not found"))
      << backend.status().message();
  EXPECT_TRUE(contains(backend.status().message(), "/nonexistent/"));
  EXPECT_TRUE(one_line(backend.status().message()));
}

TEST(CudaPlugin, LibraryWithoutEntryIsRefused) {
  auto backend = load_cuda_backend_from("libm.so.6");
  ASSERT_FALSE(backend.is_ok());
  EXPECT_EQ(backend.status().code(), StatusCode::kUnsupported);
  EXPECT_TRUE(contains(backend.status().message(), "not a seqrt CUDA plugin"))
      << backend.status().message();
}

TEST(CudaPlugin, UnloadableFileIsRefused) {
  // A text file is no ELF object: dlopen's reason is passed on.
  auto backend = load_cuda_backend_from(std::string(SEQRT_SOURCE_FILE));
  ASSERT_FALSE(backend.is_ok());
  EXPECT_EQ(backend.status().code(), StatusCode::kUnsupported);
  EXPECT_TRUE(contains(backend.status().message(), "cannot load the plugin"))
      << backend.status().message();
}

TEST(CudaPlugin, AbiMismatchIsRefused) {
  auto backend = load_cuda_backend_from(SEQRT_CUDA_FAKE_PLUGIN);
  ASSERT_FALSE(backend.is_ok());
  EXPECT_EQ(backend.status().code(), StatusCode::kUnsupported);
  EXPECT_TRUE(contains(backend.status().message(), "ABI version"))
      << backend.status().message();
  EXPECT_TRUE(one_line(backend.status().message()));
}

// On a GPU machine the real plugin gives a CUDA backend; elsewhere it says
// which of driver or device is missing, both when the runtime finds no
// driver library and when the plugin itself asks the CUDA runtime. Either
// way the CPU backend works.
TEST(CudaPlugin, PluginItselfNamesWhatIsMissing) {
  auto backend = load_cuda_backend_from(SEQRT_CUDA_REAL_PLUGIN);
  if (backend.is_ok()) {
    EXPECT_EQ((*backend)->device_info().backend, "cuda");
    return;
  }
  std::string message = backend.status().message();
  EXPECT_EQ(backend.status().code(), StatusCode::kNoDevice) << message;
  EXPECT_TRUE(contains(message, "no CUDA driver") ||
              contains(message, "no CUDA device"))
      << message;
  EXPECT_TRUE(one_line(message)) << message;
}

TEST(CudaPlugin, RealPluginGivesBackendOrNamesWhatIsMissing) {
  ScopedEnv env("SEQRT_CUDA_PLUGIN", SEQRT_CUDA_REAL_PLUGIN);
  auto backend = create_backend("cuda");
  if (backend.is_ok()) {
    EXPECT_EQ((*backend)->device_info().backend, "cuda");
    EXPECT_FALSE((*backend)->device_info().is_host_memory);
    EXPECT_GT((*backend)->device_info().memory_bytes, 0u);
  } else {
    std::string message = backend.status().message();
    EXPECT_EQ(backend.status().code(), StatusCode::kNoDevice) << message;
    EXPECT_TRUE(contains(message, "no CUDA driver") ||
                contains(message, "no CUDA device"))
        << message;
    EXPECT_TRUE(one_line(message)) << message;
  }
  auto cpu = create_backend("cpu");
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
  EXPECT_EQ((*cpu)->device_info().backend, "cpu");
}

}  // namespace
}  // namespace seqrt
