// The CPU backend: seqrt's own vectorised, multi-threaded kernels (Highway,
// OpenMP) with oneDNN for GEMM-shaped blocks. Ops without a CPU kernel are
// reported by supports() and compile(); there is no silent fallback.
#pragma once

#include <memory>

#include "backends/backend.h"

namespace seqrt {

std::unique_ptr<Backend> create_cpu_backend();
// The keys create_cpu_backend(options) takes: "device" (0 only). Threads
// are not a backend option: CompileOptions::num_threads sets them per
// compiled graph (SessionOptions::compile, --threads, num_threads=).
const std::vector<BackendOptionSpec>& cpu_backend_option_specs();
// The same, refusing options it does not take (an unknown key, a device
// other than 0) with an error naming them.
Result<std::unique_ptr<Backend>> create_cpu_backend(
    const BackendOptions& options);

}  // namespace seqrt
