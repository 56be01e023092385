// seqrt::NeuralMemory on a Vulkan device (lavapipe in CI) against the
// reference kernel with the shared-memory limit forced to 16/32/48 KiB and
// subgroups on and off: depth 1 and 2, GELU and SiLU, chunked anchors at
// absolute positions, retrieval before and after the update; whole ==
// prefill + steps through present_state; long sequences in segments.
#include <gtest/gtest.h>

#include "backends/vulkan/kernels/sequence_device_testing.h"
#include "backends/vulkan/neural_memory_testing.h"

namespace seqrt::vulkan {
namespace {

using neural_memory_testing::memory_inputs;
using sequence_testing::expect_matches_reference;
using sequence_testing::open_device;
using sequence_testing::run_on_device;

using VulkanNeuralMemory = sequence_testing::DeviceTest;

TEST_F(VulkanNeuralMemory, MatchesReferenceAtEveryLimit) {
  expect_matches_reference(kSeqrtDomain, "NeuralMemory",
                           memory_inputs(2, 2, 9, 8, 16, 2, 1), {}, 1e-4);
  AttrMap silu = {{"activation", std::string("silu")},
                  {"chunk_size", int64_t{4}},
                  {"retrieve", std::string("before_update")}};
  expect_matches_reference(kSeqrtDomain, "NeuralMemory",
                           memory_inputs(1, 2, 11, 8, 32, 2, 2), silu, 1e-4);
  AttrMap depth1 = {{"depth", int64_t{1}}, {"chunk_size", int64_t{3}}};
  expect_matches_reference(kSeqrtDomain, "NeuralMemory",
                           memory_inputs(1, 1, 10, 8, 8, 1, 3), depth1, 1e-4);
}

TEST_F(VulkanNeuralMemory, PrefillThenStepsEqualsWholeMidChunk) {
  auto device = open_device({16, true});
  ASSERT_TRUE(device.is_ok());
  // 6 tokens (one chunk and half of the next), then single tokens; the
  // position input keeps the chunks aligned to absolute positions.
  neural_memory_testing::expect_parts_equal_whole(
      *device, memory_inputs(1, 2, 9, 8, 16, 2, 4),
      {{"chunk_size", int64_t{4}}}, {{0, 6}, {6, 7}, {7, 8}, {8, 9}});
}

TEST_F(VulkanNeuralMemory, LongSequenceRunsInSegments) {
  auto device = open_device({32, true});
  ASSERT_TRUE(device.is_ok());
  const std::vector<Tensor> in = memory_inputs(1, 1, 2000, 8, 16, 2, 5);
  const AttrMap attrs = {{"chunk_size", int64_t{16}}};
  auto want = scan_testing::run_op(kSeqrtDomain, "NeuralMemory", in, attrs);
  ASSERT_TRUE(want.is_ok());
  auto got =
      run_on_device(*device, kSeqrtDomain, "NeuralMemory", in, attrs, *want);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_GT(got->dispatches, 1) << got->tiling.summary;
  for (size_t i = 0; i < 2; ++i) {
    scan_testing::expect_close(got->outputs[i], (*want)[i], 1e-4,
                               "output " + std::to_string(i));
  }
  EXPECT_EQ((*device)->validation_messages(), 0);
}

TEST_F(VulkanNeuralMemory, RuntimePositionIsUnsupported) {
  std::vector<Tensor> in = memory_inputs(1, 1, 3, 8, 16, 2, 6);
  in.push_back(Tensor());
  in.push_back(Tensor::from_vector<int64_t>({1}, {5}));
  auto device = open_device({32, true});
  ASSERT_TRUE(device.is_ok());
  auto want = scan_testing::run_op(kSeqrtDomain, "NeuralMemory", in, {});
  ASSERT_TRUE(want.is_ok());
  auto got =
      run_on_device(*device, kSeqrtDomain, "NeuralMemory", in, {}, *want);
  ASSERT_FALSE(got.is_ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace seqrt::vulkan
