// SelectiveScan, CausalConvWithState and Retention on a Vulkan device (lavapipe
// in CI) against the reference kernels, with the shared-memory limit forced to
// 16, 32 and 48 KiB and subgroup operations on and off, plus the whole-vs-parts
// equivalence and the scan's state-store count.
#include <gtest/gtest.h>

#include "backends/vulkan/kernels/sequence_device_testing.h"

namespace seqrt::vulkan {
namespace {

using scan_testing::slice_axis;
using scan_testing::uniform;
using sequence_testing::DeviceConfig;
using sequence_testing::expect_matches_reference;
using sequence_testing::open_device;
using sequence_testing::run_on_device;
using sequence_testing::RunOptions;

// Runs with the scan's debug store counter (and optionally other limits).
RunOptions counting(const DeviceLimits* plan_limits = nullptr) {
  RunOptions options;
  options.count_stores = true;
  options.plan_limits = plan_limits;
  return options;
}

using VulkanSequence = sequence_testing::DeviceTest;

std::vector<Tensor> scan_inputs(int64_t b, int64_t d, int64_t l, int64_t n,
                                int64_t g, bool optional) {
  std::vector<Tensor> in = {
      uniform({b, d, l}, 1, -1, 1), uniform({b, d, l}, 2, -2, 1),
      uniform({d, n}, 3, -1.5, -0.1), uniform({b, g, n, l}, 4, -1, 1),
      uniform({b, g, n, l}, 5, -1, 1)};
  if (optional) {
    in.push_back(uniform({d}, 6, -1, 1));
    in.push_back(uniform({b, d, l}, 7, -2, 2));
    in.push_back(uniform({d}, 8, -0.5, 0.5));
    in.push_back(uniform({b, d, n}, 9, -1, 1));
  }
  return in;
}

TEST_F(VulkanSequence, SelectiveScanMatchesReferenceAtEveryLimit) {
  auto tilings =
      expect_matches_reference(kSeqrtDomain, "SelectiveScan",
                               scan_inputs(2, 8, 37, 64, 2, true), {}, 1e-4);
  ASSERT_EQ(tilings.size(), 6u);
  // The limits really change the tiling (16 KiB gets a shorter tile).
  EXPECT_NE(tilings[0].constants, tilings[2].constants);
}

TEST_F(VulkanSequence, SelectiveScanWithoutOptionalInputs) {
  expect_matches_reference(kSeqrtDomain, "SelectiveScan",
                           scan_inputs(1, 4, 19, 16, 1, false),
                           {{"delta_softplus", int64_t{0}}}, 1e-4);
}

TEST_F(VulkanSequence, SelectiveScanStepEqualsReference) {
  expect_matches_reference(kSeqrtDomain, "SelectiveScan",
                           scan_inputs(2, 6, 1, 24, 2, true), {}, 1e-4);
}

TEST_F(VulkanSequence, SelectiveScanWholeEqualsPartsWithCarriedState) {
  auto device = open_device({32, true});
  ASSERT_TRUE(device.is_ok());
  std::vector<Tensor> whole = scan_inputs(1, 4, 20, 16, 1, true);
  auto want = scan_testing::run_op(kSeqrtDomain, "SelectiveScan", whole, {});
  ASSERT_TRUE(want.is_ok());
  auto full =
      run_on_device(*device, kSeqrtDomain, "SelectiveScan", whole, {}, *want);
  ASSERT_TRUE(full.is_ok()) << full.status().to_string();
  // Tokens 0..11, then 12..19 from the state the first part left.
  Tensor state = whole[8];
  std::vector<Tensor> y_parts;
  for (auto [begin, end] : {std::pair<int64_t, int64_t>{0, 12}, {12, 20}}) {
    std::vector<Tensor> part = whole;
    for (size_t i : {0, 1, 6}) part[i] = slice_axis(whole[i], 2, begin, end);
    for (size_t i : {3, 4}) part[i] = slice_axis(whole[i], 3, begin, end);
    part[8] = state;
    auto want_part =
        scan_testing::run_op(kSeqrtDomain, "SelectiveScan", part, {});
    ASSERT_TRUE(want_part.is_ok());
    auto got = run_on_device(*device, kSeqrtDomain, "SelectiveScan", part, {},
                             *want_part);
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    y_parts.push_back(got->outputs[0]);
    state = got->outputs[1];
  }
  scan_testing::expect_close(state, full->outputs[1], 1e-5, "final state");
  scan_testing::expect_close(slice_axis(full->outputs[0], 2, 0, 12), y_parts[0],
                             1e-5, "y first part");
  scan_testing::expect_close(slice_axis(full->outputs[0], 2, 12, 20),
                             y_parts[1], 1e-5, "y second part");
}

TEST_F(VulkanSequence, SelectiveScanStoresItsStateOncePerPass) {
  for (const DeviceConfig& config :
       {DeviceConfig{16, false}, DeviceConfig{48, true}}) {
    auto device = open_device(config);
    ASSERT_TRUE(device.is_ok());
    const int64_t b = 2, d = 8, l = 45, n = 64;
    std::vector<Tensor> in = scan_inputs(b, d, l, n, 2, true);
    auto want = scan_testing::run_op(kSeqrtDomain, "SelectiveScan", in, {});
    ASSERT_TRUE(want.is_ok());
    auto got = run_on_device(*device, kSeqrtDomain, "SelectiveScan", in, {},
                             *want, counting());
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    // One store per state element for the whole pass of 45 tokens, not
    // one per token (which would be 45 times as many).
    EXPECT_EQ(got->state_stores, static_cast<uint32_t>(b * d * n));
    scan_testing::expect_close(got->outputs[1], (*want)[1], 1e-4, "state");
  }
}

TEST_F(VulkanSequence, ScanStateInSharedMemoryGivesTheSameResults) {
  // Planned for a device with 4 invocations per workgroup: 128 states
  // need 32 per invocation, over the register budget, so the state lives
  // in shared memory.
  auto device = open_device({32, false});
  ASSERT_TRUE(device.is_ok());
  DeviceLimits few = (*device)->limits();
  few.max_invocations = 4;
  std::vector<Tensor> in = scan_inputs(1, 4, 23, 128, 1, true);
  auto want = scan_testing::run_op(kSeqrtDomain, "SelectiveScan", in, {});
  ASSERT_TRUE(want.is_ok());
  auto got = run_on_device(*device, kSeqrtDomain, "SelectiveScan", in, {},
                           *want, counting(&few));
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_EQ(got->tiling.state_place, "shared memory");
  EXPECT_EQ(got->state_stores, 4u * 128u);
  for (size_t i = 0; i < want->size(); ++i) {
    scan_testing::expect_close(got->outputs[i], (*want)[i], 1e-4,
                               "output " + std::to_string(i));
  }
  EXPECT_EQ((*device)->validation_messages(), 0);
}

TEST_F(VulkanSequence, CausalConvMatchesReferenceAtEveryLimit) {
  const int64_t b = 2, c = 5, l = 37, k = 4;
  std::vector<Tensor> in = {
      uniform({b, c, l}, 11, -1, 1), uniform({c, 1, k}, 12, -1, 1),
      uniform({c}, 13, -1, 1), uniform({b, c, k - 1}, 14, -1, 1)};
  expect_matches_reference(kOnnxDomain, "CausalConvWithState", in,
                           {{"activation", std::string("silu")}}, 1e-5);
  in[3] = Tensor();
  in[2] = Tensor();
  expect_matches_reference(kOnnxDomain, "CausalConvWithState", in, {}, 1e-5);
}

TEST_F(VulkanSequence, CausalConvPrefillThenStepsEqualsWhole) {
  auto device = open_device({16, false});
  ASSERT_TRUE(device.is_ok());
  const int64_t b = 2, c = 3, l = 9, k = 4;
  std::vector<Tensor> whole = {
      uniform({b, c, l}, 41, -1, 1), uniform({c, 1, k}, 42, -1, 1),
      uniform({c}, 43, -1, 1), uniform({b, c, k - 1}, 44, -1, 1)};
  const AttrMap attrs = {{"activation", std::string("silu")}};
  auto want =
      scan_testing::run_op(kOnnxDomain, "CausalConvWithState", whole, attrs);
  ASSERT_TRUE(want.is_ok());
  Tensor state = whole[3];
  // A prefill of 5 tokens, then single-token steps.
  for (auto [begin, end] :
       {std::pair<int64_t, int64_t>{0, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 9}}) {
    std::vector<Tensor> part = whole;
    part[0] = slice_axis(whole[0], 2, begin, end);
    part[3] = state;
    auto want_part =
        scan_testing::run_op(kOnnxDomain, "CausalConvWithState", part, attrs);
    ASSERT_TRUE(want_part.is_ok());
    auto got = run_on_device(*device, kOnnxDomain, "CausalConvWithState", part,
                             attrs, *want_part);
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    scan_testing::expect_close(got->outputs[0],
                               slice_axis((*want)[0], 2, begin, end), 1e-5,
                               "tokens from " + std::to_string(begin));
    state = got->outputs[1];
  }
  scan_testing::expect_close(state, (*want)[1], 0, "final state");
}

TEST_F(VulkanSequence, CausalConvShortInputKeepsPartOfThePastState) {
  // L = 2 < k - 1 = 4: the new state is two old values and the two inputs.
  const int64_t b = 1, c = 3, l = 2, k = 5;
  std::vector<Tensor> in = {uniform({b, c, l}, 21, -1, 1),
                            uniform({c, 1, k}, 22, -1, 1), Tensor(),
                            uniform({b, c, k - 1}, 24, -1, 1)};
  expect_matches_reference(kOnnxDomain, "CausalConvWithState", in, {}, 1e-5);
}

std::vector<Tensor> retention_inputs(int64_t b, int64_t h, int64_t t,
                                     int64_t dk, int64_t dv) {
  return {uniform({b, h, t, dk}, 31, -1, 1), uniform({b, h, t, dk}, 32, -1, 1),
          uniform({b, h, t, dv}, 33, -1, 1),
          uniform({b, h, dk, dv}, 34, -1, 1)};
}

TEST_F(VulkanSequence, RetentionMatchesReferenceAtEveryLimit) {
  // dk = 40 splits the state rows over invocations; dk != dv.
  expect_matches_reference(kSeqrtDomain, "Retention",
                           retention_inputs(1, 2, 29, 40, 12), {}, 1e-4);
  expect_matches_reference(
      kSeqrtDomain, "Retention", retention_inputs(2, 2, 1, 8, 8),
      {{"gammas", std::vector<float>{0.5f, 0.99f}}, {"scale", 0.25f}}, 1e-4);
}

TEST_F(VulkanSequence, RetentionPrefillThenStepsEqualsWhole) {
  auto device = open_device({16, true});
  ASSERT_TRUE(device.is_ok());
  std::vector<Tensor> whole = retention_inputs(1, 2, 7, 24, 8);
  auto want = scan_testing::run_op(kSeqrtDomain, "Retention", whole, {});
  ASSERT_TRUE(want.is_ok());
  Tensor state = whole[3];
  for (auto [begin, end] :
       {std::pair<int64_t, int64_t>{0, 5}, {5, 6}, {6, 7}}) {
    std::vector<Tensor> part = whole;
    for (size_t i : {0, 1, 2}) part[i] = slice_axis(whole[i], 2, begin, end);
    part[3] = state;
    auto want_part = scan_testing::run_op(kSeqrtDomain, "Retention", part, {});
    ASSERT_TRUE(want_part.is_ok());
    auto got =
        run_on_device(*device, kSeqrtDomain, "Retention", part, {}, *want_part);
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    scan_testing::expect_close(got->outputs[0],
                               slice_axis((*want)[0], 2, begin, end), 1e-4,
                               "tokens from " + std::to_string(begin));
    state = got->outputs[1];
  }
  scan_testing::expect_close(state, (*want)[1], 1e-4, "final state");
}

TEST_F(VulkanSequence, RetentionWithoutPastState) {
  std::vector<Tensor> in = retention_inputs(1, 3, 17, 16, 8);
  in.pop_back();
  expect_matches_reference(kSeqrtDomain, "Retention", in, {}, 1e-4);
}

}  // namespace
}  // namespace seqrt::vulkan
