// Picks the next token from a row of logits: greedy (temperature 0) or
// sampling from softmax(logits / temperature), optionally restricted to the
// top k. Seeded and platform-independent: the same seed gives the same
// tokens everywhere (a fixed 64-bit generator, no std distributions, whose
// algorithms differ between standard libraries).
#pragma once

#include <cstdint>

#include "graph/status.h"

namespace seqrt {

struct SamplerOptions {
  double temperature = 0.8;  // 0: greedy
  int64_t top_k = 0;         // 0: all tokens
  uint64_t seed = 0;
};

class Sampler {
 public:
  // Fails on a negative or non-finite temperature or a negative top_k.
  static Result<Sampler> create(const SamplerOptions& options);

  // The chosen token id in [0, size); `logits` holds `size` values. A
  // non-finite logit is an error (it means the model diverged).
  Result<int64_t> next(const float* logits, int64_t size);

 private:
  explicit Sampler(const SamplerOptions& options)
      : options_(options), state_(options.seed) {}
  // splitmix64: the next 64 random bits.
  uint64_t next_bits();
  // Uniform in [0, 1) with 53 random bits.
  double uniform();

  SamplerOptions options_;
  uint64_t state_;
};

}  // namespace seqrt
