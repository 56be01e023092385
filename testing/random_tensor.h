// Seeded uniform f32 tensors for tests, benchmarks and samples: the same
// seed gives the same values on every machine (std::mt19937).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "graph/tensor.h"

namespace seqrt {

inline Tensor random_uniform_f32(std::vector<int64_t> dims, uint32_t seed,
                                 float lo = -1.0f, float hi = 1.0f) {
  Tensor tensor = Tensor::allocate(DType::kF32, std::move(dims)).value();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(lo, hi);
  float* data = tensor.mutable_data_as<float>();
  for (int64_t i = 0; i < tensor.num_elements(); ++i) data[i] = uniform(rng);
  return tensor;
}

}  // namespace seqrt
