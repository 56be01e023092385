// The CUDA backend behind backends/backend.h, created only by the plugin's
// entry point (plugin_entry.cc) once a driver and a device are found.
#pragma once

#include <memory>

#include "backends/backend.h"

namespace seqrt::cuda {

// kUnsupported "no CUDA driver" / "no CUDA device" where there is none.
Result<std::unique_ptr<Backend>> create_cuda_backend(int device);

}  // namespace seqrt::cuda
