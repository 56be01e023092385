// The CPU backend: seqrt's own vectorised, multi-threaded kernels (Highway,
// OpenMP) with oneDNN for GEMM-shaped blocks. Ops without a CPU kernel are
// reported by supports() and compile(); there is no silent fallback.
#pragma once

#include <memory>

#include "backends/backend.h"

namespace seqrt {

std::unique_ptr<Backend> create_cpu_backend();

}  // namespace seqrt
