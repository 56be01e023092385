// seqrt::NeuralMemory (Titans long-term memory, OPS.md) as the token loop
// in fp32: one block per (batch, head) keeps the memory MLP's weights (and
// the anchor weights when chunks are longer than one token) in shared
// memory and the momentum in registers or shared memory for the whole
// pass (tiling.h, NeuralMemoryTiling); only y and the final state are
// written (DESIGN.md §5.2).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/tiling.h"

namespace seqrt::cuda {

struct NeuralMemoryArgs {
  int64_t batch = 0, heads = 0, steps = 0;
  int64_t d = 0, m = 0;  // m = d for depth 1
  int depth = 2;
  int64_t chunk = 1;
  bool gelu = true;  // else SiLU
  bool retrieve_before = false;
  // q, k, v (B, H, T, d); theta, eta, alpha (B, H, T); W1 (H, d, m);
  // W2 (H, m, d) for depth 2; past_state (B, H, 3·P) or null;
  // position (B) int64 or null (checked >= 0 on the host).
  const float *q = nullptr, *k = nullptr, *v = nullptr;
  const float *theta = nullptr, *eta = nullptr, *alpha = nullptr;
  const float *w1 = nullptr, *w2 = nullptr;
  const float* past_state = nullptr;
  const int64_t* position = nullptr;
  // y (B, H, T, d); present_state (B, H, 3·P) or null. present may be past
  // (each block reads its row whole before writing it).
  float* out = nullptr;
  float* present_state = nullptr;
};

cudaError_t launch_neural_memory(const NeuralMemoryArgs& args,
                                 const NeuralMemoryTiling& tiling,
                                 cudaStream_t stream);

}  // namespace seqrt::cuda
