// Loads the CUDA backend plugin (libseqrt_cuda.so) at run time, so the core
// library never links CUDA and runs where there is none. The boundary is
// described in backends/cuda/README.md and backends/cuda/plugin_abi.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"

namespace seqrt {

inline constexpr const char* kCudaPluginFileName = "libseqrt_cuda.so";

// True when this build produced the plugin (nvcc was found), so "cuda" is
// one of the compiled backends.
bool cuda_plugin_built();

// Where the plugin is looked for, in order: $SEQRT_CUDA_PLUGIN (a file;
// when set, the only place), the folder of the binary holding this code
// (libseqrt.so or a statically linked program), ../lib beside it (an
// installed bin/seqrt), then the build tree's own output.
std::vector<std::string> cuda_plugin_search_paths();

// A new CUDA backend from the first plugin found, once the NVIDIA driver
// library (libcuda.so.1) is known to load. kNoDevice with one line saying
// why when there is no driver or the plugin finds no device; kUnsupported
// when the plugin is missing, cannot be loaded or was built for another
// ABI. The
// plugin stays loaded for the life of the process (its objects may outlive any
// caller).
// `options` go to the plugin (its keys: cuda_backend_option_specs() in
// backends/cuda/plugin_abi.h).
Result<std::unique_ptr<Backend>> load_cuda_backend(
    const BackendOptions& options = {});

// The same from one plugin file (tests load broken plugins this way).
Result<std::unique_ptr<Backend>> load_cuda_backend_from(
    const std::string& path, const BackendOptions& options = {});

}  // namespace seqrt
