// Inputs of seqrt::NeuralMemory for the Vulkan device tests.
#pragma once

#include <vector>

#include "backends/vulkan/kernels/sequence_device_testing.h"
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

// Runs `whole` on `device` part by part ([begin, end) of the token axis),
// each part from the state the one before left and with its absolute
// `position` (a constant input), and expects every part's tokens and the
// final state to equal the reference kernel's run over the whole sequence
// (OPS.md: whole == parts, split points mid-chunk included). Returns each
// part's tiling.
inline std::vector<KernelTiling> expect_parts_equal_whole(
    const std::shared_ptr<Device>& device, const std::vector<Tensor>& whole,
    const AttrMap& attrs,
    const std::vector<std::pair<int64_t, int64_t>>& parts) {
  using scan_testing::slice_axis;
  std::vector<KernelTiling> tilings;
  auto want = scan_testing::run_op(kSeqrtDomain, "NeuralMemory", whole, attrs);
  EXPECT_TRUE(want.is_ok()) << want.status().to_string();
  if (!want.is_ok()) return tilings;
  Tensor state;
  for (auto [begin, end] : parts) {
    std::vector<Tensor> part = whole;
    for (size_t i : {0, 1, 2, 3, 4, 5}) {
      part[i] = slice_axis(whole[i], 2, begin, end);
    }
    sequence_testing::RunOptions options;
    if (begin > 0) {
      part.push_back(state);
      part.push_back(Tensor::from_vector<int64_t>({1}, {begin}));
      options.constant_inputs = {9};
    }
    auto want_part =
        scan_testing::run_op(kSeqrtDomain, "NeuralMemory", part, attrs);
    EXPECT_TRUE(want_part.is_ok()) << want_part.status().to_string();
    if (!want_part.is_ok()) return tilings;
    auto got = sequence_testing::run_on_device(
        device, kSeqrtDomain, "NeuralMemory", part, attrs, *want_part, options);
    EXPECT_TRUE(got.is_ok()) << got.status().to_string();
    if (!got.is_ok()) return tilings;
    scan_testing::expect_close(got->outputs[0],
                               slice_axis((*want)[0], 2, begin, end), 1e-4,
                               "tokens from " + std::to_string(begin));
    state = got->outputs[1];
    tilings.push_back(got->tiling);
  }
  scan_testing::expect_close(state, (*want)[1], 1e-4, "final state");
  EXPECT_EQ(device->validation_messages(), 0);
  return tilings;
}

}  // namespace seqrt::vulkan::neural_memory_testing
