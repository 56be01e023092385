// Inputs of ONNX LinearAttention for the Vulkan device tests.
#pragma once

#include <string>
#include <vector>

#include "graph/attribute.h"
#include "ops/sequence/scan_test_util.h"

namespace seqrt::vulkan::linear_attention_testing {

struct Sizes {
  int64_t b, t, hq, hkv, dk, dv;
};

// query, key, value, past_state, decay (per key or per head), beta (per
// head or shared). Small keys keep the delta rules' updates contracting.
inline std::vector<Tensor> inputs(const Sizes& s, bool decay_per_key,
                                  bool beta_per_head, uint64_t seed) {
  using scan_testing::uniform;
  return {uniform({s.b, s.t, s.hq * s.dk}, seed, -1, 1),
          uniform({s.b, s.t, s.hkv * s.dk}, seed + 1, -0.2, 0.2),
          uniform({s.b, s.t, s.hkv * s.dv}, seed + 2, -1, 1),
          uniform({s.b, s.hkv, s.dk, s.dv}, seed + 3, -0.5, 0.5),
          uniform({s.b, s.t, decay_per_key ? s.hkv * s.dk : s.hkv}, seed + 4,
                  -0.4, 0.0),
          uniform({s.b, s.t, beta_per_head ? s.hkv : 1}, seed + 5, 0.1, 0.9)};
}

inline AttrMap attrs_for(const std::string& rule, const Sizes& s) {
  return {
      {"update_rule", rule}, {"q_num_heads", s.hq}, {"kv_num_heads", s.hkv}};
}

}  // namespace seqrt::vulkan::linear_attention_testing
