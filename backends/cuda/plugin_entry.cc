// The plugin's only exported symbol (plugin.map): checks the runtime's ABI
// record against its own, then creates the backend on device
// $SEQRT_CUDA_DEVICE, else the record's option "device", else 0. Never
// throws across the boundary.
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/plugin_abi.h"

namespace {

void fail(seqrt::cuda_plugin::CreateResult* result, seqrt::StatusCode code,
          const std::string& message) {
  result->backend = nullptr;
  result->status_code = static_cast<int32_t>(code);
  std::snprintf(result->message, sizeof(result->message), "%s",
                message.c_str());
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void seqrt_cuda_plugin_create(
    const seqrt::cuda_plugin::AbiRecord* runtime_abi,
    seqrt::cuda_plugin::CreateResult* result) {
  using seqrt::StatusCode;
  seqrt::cuda_plugin::AbiRecord plugin_abi;
  std::string mismatch =
      seqrt::cuda_plugin::abi_mismatch(*runtime_abi, plugin_abi);
  if (!mismatch.empty()) {
    fail(result, StatusCode::kUnsupported,
         "cuda backend: plugin built for ABI " +
             std::to_string(plugin_abi.version) + " (" + mismatch +
             " differs), this runtime has ABI " +
             std::to_string(runtime_abi->version) +
             "; rebuild the plugin with this seqrt");
    return;
  }
  try {
    const seqrt::BackendOptions options = runtime_abi->options != nullptr
                                              ? *runtime_abi->options
                                              : seqrt::BackendOptions{};
    seqrt::Status keys = seqrt::check_backend_option_keys(
        "cuda", options, seqrt::cuda_plugin::cuda_backend_option_specs());
    if (!keys.is_ok()) {
      fail(result, keys.code(), keys.message());
      return;
    }
    const char* env = std::getenv("SEQRT_CUDA_DEVICE");
    int device = env != nullptr && env[0] != '\0' ? std::atoi(env)
                                                  : options.device.value_or(0);
    auto backend = seqrt::cuda::create_cuda_backend(device);
    if (!backend.is_ok()) {
      fail(result, backend.status().code(), backend.status().message());
      return;
    }
    result->backend = std::move(backend).value().release();
    result->status_code = 0;
  } catch (const std::exception& error) {
    fail(result, StatusCode::kInternal,
         std::string("cuda backend: ") + error.what());
  }
}
