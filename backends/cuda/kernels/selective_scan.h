// SelectiveScan (Mamba-1) forward in fp32 with the running state in
// registers for the whole sequence (DESIGN.md §5.2): only the final state
// is written. The tiling comes from plan_selective_scan.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/tiling.h"

namespace seqrt::cuda {

// Layouts as OPS.md: u, delta, z, y (B,D,L); A (D,N); Bm, Cm (B,G,N,L);
// Dskip, delta_bias (D); past/present state (B,D,N). Optional pointers
// may be null.
struct SelectiveScanArgs {
  const float* u = nullptr;
  const float* delta = nullptr;
  const float* a = nullptr;
  const float* b = nullptr;
  const float* c = nullptr;
  const float* d_skip = nullptr;
  const float* z = nullptr;
  const float* delta_bias = nullptr;
  const float* past_state = nullptr;
  float* y = nullptr;
  float* present_state = nullptr;
  int64_t batch = 0;
  int64_t channels = 0;    // D
  int64_t groups = 0;      // G
  int64_t state_size = 0;  // N
  int64_t length = 0;      // L
  bool delta_softplus = true;
};

cudaError_t launch_selective_scan(const SelectiveScanArgs& args,
                                  const ScanTiling& tiling,
                                  cudaStream_t stream);

}  // namespace seqrt::cuda
