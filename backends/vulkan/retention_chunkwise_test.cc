// Chunkwise Retention on Vulkan: the planner's choice of form, and on a
// device (lavapipe in CI) the chunkwise passes against the reference kernel
// and against the recurrent kernel, at every forced limit.
#include <gtest/gtest.h>

#include "backends/vulkan/kernels/sequence_device_testing.h"
#include "backends/vulkan/tiling.h"

namespace seqrt::vulkan {
namespace {

using scan_testing::uniform;
using sequence_testing::expect_matches_reference;
using sequence_testing::open_device;
using sequence_testing::run_on_device;

DeviceLimits host_limits(uint32_t shared_kib) {
  DeviceLimits limits;
  limits.shared_memory_bytes = shared_kib * 1024;
  limits.max_invocations = 1024;
  limits.max_group_count = {65535, 65535, 65535};
  limits.subgroup_size = 32;
  limits.subgroup_arithmetic = true;
  limits.max_storage_buffer_range = 1u << 27;
  return limits;
}

TEST(RetentionForm, ChunkwiseForLongPromptsOnly) {
  for (uint32_t kib : {16u, 32u, 48u}) {
    auto prompt = plan_retention_form(16, 8, 1000, 2, 64, host_limits(kib));
    ASSERT_TRUE(prompt.is_ok());
    EXPECT_TRUE(is_chunkwise_retention(*prompt)) << prompt->summary;
    EXPECT_LE(prompt->shared_bytes, kib * 1024);
    EXPECT_EQ(prompt->state_place, "device memory, once per chunk");
    auto step = plan_retention_form(16, 8, 1, 2, 64, host_limits(kib));
    ASSERT_TRUE(step.is_ok());
    EXPECT_FALSE(is_chunkwise_retention(*step));
  }
  // The chunk follows the hint (a power of two at most it, and 64).
  auto hinted = retention_chunk_tiling_from(
      *plan_retention_form(8, 8, 1000, 1, 16, host_limits(48)));
  ASSERT_TRUE(hinted.is_ok());
  EXPECT_EQ(hinted->chunk, 16u);
  auto capped = retention_chunk_tiling_from(
      *plan_retention_form(8, 8, 1000, 1, 512, host_limits(48)));
  EXPECT_EQ(capped->chunk, 64u);
  // 4 KiB of shared memory fits a 32 x 32 score matrix only.
  auto small = retention_chunk_tiling_from(
      *plan_retention_form(8, 8, 1000, 1, 64, host_limits(4)));
  EXPECT_EQ(small->chunk, 32u);
  // Wide heads: a shorter chunk keeps the output pass's loops within the
  // budget (tiling.h, kMaxLoopIterations), though 64 would fit in memory.
  auto wide = retention_chunk_tiling_from(
      *plan_retention_form(256, 256, 1000, 1, 64, host_limits(228)));
  ASSERT_TRUE(wide.is_ok());
  EXPECT_EQ(wide->chunk, 32u);
  // Chunk states past one binding's range: the recurrent form.
  DeviceLimits narrow = host_limits(48);
  narrow.max_storage_buffer_range = 1 << 16;
  auto huge = plan_retention_form(64, 64, 4096, 4, 64, narrow);
  ASSERT_TRUE(huge.is_ok());
  EXPECT_FALSE(is_chunkwise_retention(*huge));
}

using VulkanRetentionChunkwise = sequence_testing::DeviceTest;

std::vector<Tensor> retention_inputs(int64_t b, int64_t h, int64_t t,
                                     int64_t dk, int64_t dv) {
  return {uniform({b, h, t, dk}, 51, -1, 1), uniform({b, h, t, dk}, 52, -1, 1),
          uniform({b, h, t, dv}, 53, -1, 1),
          uniform({b, h, dk, dv}, 54, -1, 1)};
}

TEST_F(VulkanRetentionChunkwise, MatchesReferenceAtEveryLimit) {
  // 300 tokens: chunks of 64 and a last one of 44; dk != dv; a past state.
  auto tilings = expect_matches_reference(
      kSeqrtDomain, "Retention", retention_inputs(2, 2, 300, 12, 8), {}, 1e-4);
  ASSERT_EQ(tilings.size(), 6u);
  for (const KernelTiling& t : tilings) {
    EXPECT_TRUE(is_chunkwise_retention(t)) << t.summary;
  }
  // A chunk hint of 16, explicit decays (0 and 1 included), no past.
  std::vector<Tensor> in = retention_inputs(1, 3, 259, 8, 4);
  in.pop_back();
  expect_matches_reference(kSeqrtDomain, "Retention", in,
                           {{"chunk_size", int64_t{16}},
                            {"gammas", std::vector<float>{0.0f, 0.9f, 1.0f}}},
                           1e-4);
}

TEST_F(VulkanRetentionChunkwise, EqualsTheRecurrentKernel) {
  sequence_testing::expect_chunked_equals_recurrent(
      kSeqrtDomain, "Retention", retention_inputs(1, 2, 257, 16, 16), {},
      is_chunkwise_retention, 3, 1e-4);
}

}  // namespace
}  // namespace seqrt::vulkan
