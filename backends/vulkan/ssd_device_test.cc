// seqrt::SSD (Mamba-2) on a Vulkan device (lavapipe in CI) against the
// reference kernel with the shared-memory limit forced to 16/32/48 KiB and
// subgroups on and off; a prefill then single-token steps with the state
// carried equal the whole sequence.
#include <gtest/gtest.h>

#include "backends/vulkan/kernels/sequence_device_testing.h"
#include "backends/vulkan/tiling.h"

namespace seqrt::vulkan {
namespace {

using scan_testing::uniform;
using sequence_testing::expect_matches_reference;
using sequence_testing::expect_parts_equal_whole;
using sequence_testing::open_device;
using sequence_testing::run_on_device;

using VulkanSsd = sequence_testing::DeviceTest;

// x, dt, A, Bm, Cm, D, z, dt_bias, past_state.
std::vector<Tensor> ssd_inputs(int64_t b, int64_t l, int64_t h, int64_t p,
                               int64_t g, int64_t n, bool options) {
  std::vector<Tensor> in = {
      uniform({b, l, h, p}, 61, -1, 1), uniform({b, l, h}, 62, -4, 0),
      uniform({h}, 63, -3, -0.2), uniform({b, l, g, n}, 64, -1, 1),
      uniform({b, l, g, n}, 65, -1, 1)};
  if (options) {
    in.push_back(uniform({h}, 66, -1, 1));
    in.push_back(uniform({b, l, h, p}, 67, -3, 3));
    in.push_back(uniform({h}, 68, -0.5, 0.5));
    in.push_back(uniform({b, h, p, n}, 69, -1, 1));
  }
  return in;
}

TEST_F(VulkanSsd, MatchesReferenceAtEveryLimit) {
  // N = 64 splits each column's states over invocations; G = 2.
  auto tilings = expect_matches_reference(
      kSeqrtDomain, "SSD", ssd_inputs(2, 37, 4, 8, 2, 64, true), {}, 2e-4);
  ASSERT_EQ(tilings.size(), 6u);
  EXPECT_NE(tilings[0].constants, tilings[2].constants);
}

TEST_F(VulkanSsd, NoOptionsClampedStepWithoutSoftplus) {
  expect_matches_reference(kSeqrtDomain, "SSD",
                           ssd_inputs(1, 21, 2, 16, 1, 16, false),
                           {{"dt_min", 0.05f}, {"dt_max", 0.3f}}, 2e-4);
  // Without softplus and with dt_min < 0, Δ·A > 0 on some tokens.
  std::vector<Tensor> in = ssd_inputs(1, 30, 2, 4, 1, 16, true);
  in[1] = uniform({1, 30, 2}, 70, -0.05, 0.3);
  expect_matches_reference(kSeqrtDomain, "SSD", in,
                           {{"dt_softplus", int64_t{0}}, {"dt_min", -0.02f}},
                           2e-4);
}

TEST_F(VulkanSsd, PrefillThenStepsEqualsWhole) {
  auto device = open_device({16, true});
  ASSERT_TRUE(device.is_ok());
  expect_parts_equal_whole(
      *device, {kSeqrtDomain, "SSD", {}, {0, 1, 3, 4, 6}, 8, 2e-4},
      ssd_inputs(1, 9, 2, 8, 1, 32, true), {{0, 6}, {6, 7}, {7, 8}, {8, 9}});
}

TEST_F(VulkanSsd, LongSequenceRunsInSegmentsCarryingTheState) {
  // 10000 tokens, P = 2, recurrent (planned as if no chunk states fit a
  // binding): more loop iterations than one dispatch may run on llvmpipe,
  // so several segments (tiling.h); present not requested.
  auto device = open_device({48, true});
  ASSERT_TRUE(device.is_ok());
  const std::vector<Tensor> in = ssd_inputs(1, 10000, 1, 2, 1, 16, true);
  auto want = scan_testing::run_op(kSeqrtDomain, "SSD", in, {}, 1);
  ASSERT_TRUE(want.is_ok());
  DeviceLimits no_chunks = (*device)->limits();
  no_chunks.max_storage_buffer_range = 1024;
  sequence_testing::RunOptions options;
  options.plan_limits = &no_chunks;
  auto got =
      run_on_device(*device, kSeqrtDomain, "SSD", in, {}, *want, options);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_FALSE(is_chunked_ssd(got->tiling));
  EXPECT_GT(got->dispatches, 1) << got->tiling.summary;
  scan_testing::expect_close(got->outputs[0], (*want)[0], 2e-4, "y");
  EXPECT_EQ((*device)->validation_messages(), 0);
}

TEST_F(VulkanSsd, ChunkedFormMatchesReferenceAtEveryLimit) {
  // 300 tokens: chunks of 64 and a last one of 44; G = 2, a past state.
  auto tilings = expect_matches_reference(kSeqrtDomain, "SSD",
                                          ssd_inputs(1, 300, 4, 8, 2, 32, true),
                                          {{"chunk_size", int64_t{64}}}, 2e-4);
  ASSERT_EQ(tilings.size(), 6u);
  for (const KernelTiling& t : tilings) {
    EXPECT_TRUE(is_chunked_ssd(t)) << t.summary;
  }
  // Δ·A > 0 on some tokens (no softplus, dt_min < 0): the chunked form
  // must not clamp those exponents. Chunk hint 16, no optional inputs.
  std::vector<Tensor> in = ssd_inputs(1, 260, 2, 4, 1, 16, false);
  in[1] = uniform({1, 260, 2}, 71, -0.05, 0.3);
  expect_matches_reference(kSeqrtDomain, "SSD", in,
                           {{"dt_softplus", int64_t{0}},
                            {"dt_min", -0.02f},
                            {"chunk_size", int64_t{16}}},
                           2e-4);
}

TEST_F(VulkanSsd, ChunkedEqualsRecurrent) {
  sequence_testing::expect_chunked_equals_recurrent(
      kSeqrtDomain, "SSD", ssd_inputs(2, 270, 2, 8, 1, 16, true), {},
      is_chunked_ssd, 3, 2e-4);
}

TEST_F(VulkanSsd, BadShapesAreErrors) {
  std::vector<Tensor> in = ssd_inputs(1, 4, 3, 4, 2, 8, false);
  auto device = open_device({32, true});
  ASSERT_TRUE(device.is_ok());
  auto got = run_on_device(*device, kSeqrtDomain, "SSD", in, {},
                           {uniform({1, 4, 3, 4}, 1, 0, 1)});
  ASSERT_FALSE(got.is_ok());
  EXPECT_NE(got.status().message().find("multiple of G"), std::string::npos)
      << got.status().message();
}

}  // namespace
}  // namespace seqrt::vulkan
