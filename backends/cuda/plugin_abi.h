// The boundary between the core runtime and the CUDA plugin
// (libseqrt_cuda.so): the one symbol the plugin exports and the check that
// both sides were built from the same headers. See README.md.
//
// C++ objects (Backend, Graph, Tensor, Status) cross the boundary, so the
// plugin and the runtime must come from the same source tree and compiler;
// the ABI record below catches a plugin left over from another build.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/backend.h"

namespace seqrt::cuda_plugin {

// Raised whenever Backend, Executable, Graph, Tensor or Status change
// layout or meaning in a way the size check below cannot see.
// 2: Executable::kernel_plan. 3: Executable::create_state, run_with_state,
// read_state and write_state (a Stream's state kept on the device).
// 4: Executable::keeps_state_on_device, Backend without its buffer calls,
// the BackendOptions in the record. 5: Backend::lowering_needs,
// kernel_supports and compile_lowered (the compile path in the base class).
inline constexpr uint32_t kAbiVersion = 5;

// The keys the CUDA backend takes (BackendOptions); $SEQRT_CUDA_DEVICE
// overrides "device". Here so that the runtime checks them without loading
// the plugin and the plugin checks the same list.
inline const std::vector<BackendOptionSpec>& cuda_backend_option_specs() {
  static const std::vector<BackendOptionSpec> specs = {
      {"device", "a CUDA device index"}};
  return specs;
}

// What the runtime passes in: its view of the ABI, then (only read once
// the versions agree) the options the backend is created with.
struct AbiRecord {
  uint32_t version = kAbiVersion;
  uint32_t sizeof_graph = sizeof(Graph);
  uint32_t sizeof_node = sizeof(Node);
  uint32_t sizeof_tensor = sizeof(Tensor);
  uint32_t sizeof_status = sizeof(Status);
  uint32_t sizeof_device_info = sizeof(DeviceInfo);
  uint32_t sizeof_backend_options = sizeof(BackendOptions);
  const BackendOptions* options = nullptr;  // null: the defaults
};

// What the plugin hands back. On success `backend` is a new Backend the
// caller owns (delete through its virtual destructor while the plugin stays
// loaded); otherwise `backend` is null and `message` says why, one line.
struct CreateResult {
  Backend* backend = nullptr;
  int32_t status_code = 0;  // a StatusCode value
  char message[512] = {};
};

inline constexpr const char* kEntryName = "seqrt_cuda_plugin_create";
extern "C" {
using CreateFn = void (*)(const AbiRecord* runtime_abi, CreateResult* result);
}

// Empty when the two records agree, else what differs.
inline const char* abi_mismatch(const AbiRecord& runtime,
                                const AbiRecord& plugin) {
  if (runtime.version != plugin.version) return "ABI version";
  if (runtime.sizeof_graph != plugin.sizeof_graph) return "sizeof(Graph)";
  if (runtime.sizeof_node != plugin.sizeof_node) return "sizeof(Node)";
  if (runtime.sizeof_tensor != plugin.sizeof_tensor) return "sizeof(Tensor)";
  if (runtime.sizeof_status != plugin.sizeof_status) return "sizeof(Status)";
  if (runtime.sizeof_device_info != plugin.sizeof_device_info) {
    return "sizeof(DeviceInfo)";
  }
  if (runtime.sizeof_backend_options != plugin.sizeof_backend_options) {
    return "sizeof(BackendOptions)";
  }
  return "";
}

}  // namespace seqrt::cuda_plugin
