#include "tools/generate/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace seqrt {

Result<Sampler> Sampler::create(const SamplerOptions& options) {
  if (!std::isfinite(options.temperature) || options.temperature < 0) {
    return invalid_argument("temperature must be a finite number >= 0, got {}",
                            options.temperature);
  }
  if (options.top_k < 0) {
    return invalid_argument("top-k must be >= 0 (0: all tokens), got {}",
                            options.top_k);
  }
  return Sampler(options);
}

uint64_t Sampler::next_bits() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double Sampler::uniform() {
  return static_cast<double>(next_bits() >> 11) * 0x1.0p-53;
}

Result<int64_t> Sampler::next(const float* logits, int64_t size) {
  for (int64_t i = 0; i < size; ++i) {
    if (!std::isfinite(logits[i])) {
      return invalid_argument("logit {} of token {} is not finite", logits[i],
                              i);
    }
  }
  int64_t best = std::max_element(logits, logits + size) - logits;
  if (options_.temperature == 0) return best;

  // Candidates by decreasing logit (ties by id), cut to the top k.
  std::vector<int64_t> order(size);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return logits[a] > logits[b]; });
  if (options_.top_k > 0 && options_.top_k < size) order.resize(options_.top_k);

  std::vector<double> weights(order.size());
  double total = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    weights[i] =
        std::exp((logits[order[i]] - logits[best]) / options_.temperature);
    total += weights[i];
  }
  double pick = uniform() * total;
  for (size_t i = 0; i < order.size(); ++i) {
    pick -= weights[i];
    if (pick < 0) return order[i];
  }
  return order.back();  // rounding left `pick` just above zero
}

}  // namespace seqrt
