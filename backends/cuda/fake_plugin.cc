// A plugin with the right entry point that claims another ABI version: the
// loader's tests check that the runtime refuses it with a clear message.
// It answers as a real plugin of a newer seqrt would.
#include <cstdio>

#include "backends/cuda/plugin_abi.h"

extern "C" __attribute__((visibility("default"))) void seqrt_cuda_plugin_create(
    const seqrt::cuda_plugin::AbiRecord* runtime_abi,
    seqrt::cuda_plugin::CreateResult* result) {
  seqrt::cuda_plugin::AbiRecord plugin_abi;
  plugin_abi.version = seqrt::cuda_plugin::kAbiVersion + 1;
  result->backend = nullptr;
  result->status_code = static_cast<int32_t>(seqrt::StatusCode::kUnsupported);
  std::snprintf(result->message, sizeof(result->message),
                "cuda backend: plugin built for ABI %u (%s differs), this "
                "runtime has ABI %u; rebuild the plugin with this seqrt",
                plugin_abi.version,
                seqrt::cuda_plugin::abi_mismatch(*runtime_abi, plugin_abi),
                runtime_abi->version);
}
