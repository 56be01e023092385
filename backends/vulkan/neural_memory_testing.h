// Inputs of seqrt::NeuralMemory for the Vulkan device tests.
#pragma once

#include <vector>

#include "ops/sequence/scan_test_util.h"

namespace seqrt::vulkan::neural_memory_testing {

// q, k, v, theta, eta, alpha, W1, W2 (absent for depth 1): values in the
// ranges OPS.md allows, small enough that the memory stays bounded.
inline std::vector<Tensor> memory_inputs(int64_t b, int64_t h, int64_t t,
                                         int64_t d, int64_t m, int depth,
                                         uint64_t seed) {
  using scan_testing::uniform;
  std::vector<Tensor> in = {uniform({b, h, t, d}, seed, -1, 1),
                            uniform({b, h, t, d}, seed + 1, -1, 1),
                            uniform({b, h, t, d}, seed + 2, -1, 1),
                            uniform({b, h, t}, seed + 3, 0, 0.1),
                            uniform({b, h, t}, seed + 4, 0, 0.9),
                            uniform({b, h, t}, seed + 5, 0, 0.2),
                            uniform({h, d, m}, seed + 6, -0.3, 0.3)};
  in.push_back(depth == 2 ? uniform({h, m, d}, seed + 7, -0.3, 0.3) : Tensor());
  return in;
}

}  // namespace seqrt::vulkan::neural_memory_testing
