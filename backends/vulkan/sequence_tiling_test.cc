// The kernel-level planner (tiling.h) at the shared-memory limits of
// DESIGN.md §5.2: 16, 32, 48 and 228 KiB. Pure host code, no device.
#include "backends/vulkan/tiling.h"
#include "backends/vulkan/tiling_testing.h"

#include <gtest/gtest.h>

namespace seqrt::vulkan {
namespace {

const uint32_t kLimitsKib[] = {16, 32, 48, 228};

TEST(SequenceTiling, ScanFitsEveryLimit) {
  for (uint32_t kib : kLimitsKib) {
    for (bool subgroup : {true, false}) {
      for (int64_t n : {1, 16, 64, 128, 256}) {
        SCOPED_TRACE(testing::Message()
                     << kib << " KiB, N " << n << ", subgroup " << subgroup);
        auto tiling =
            plan_selective_scan({64, n, 2048}, limits_with(kib, subgroup));
        ASSERT_TRUE(tiling.is_ok()) << tiling.status().to_string();
        EXPECT_LE(tiling->shared_bytes, kib * 1024);
        EXPECT_EQ(tiling->shared_limit, kib * 1024);
        auto t = scan_tiling_from(*tiling);
        ASSERT_TRUE(t.is_ok());
        EXPECT_EQ(scan_shared_bytes(*t), tiling->shared_bytes);
        EXPECT_LE(t->invocations, kTargetInvocations);
        EXPECT_GE(t->splits * t->states_per_invocation, n);
        EXPECT_EQ(64 % t->channels, 0u) << "a workgroup spans one group";
        EXPECT_EQ(tiling->state_place, "registers");
        EXPECT_LE(t->states_per_invocation, kRegisterStateFloats);
        if (t->subgroup) {
          EXPECT_TRUE(subgroup);
          EXPECT_EQ(t->invocations % 32, 0u);
          EXPECT_EQ(32 % t->splits, 0u);
        }
      }
    }
  }
}

TEST(SequenceTiling, ScanTileGrowsWithTheLimit) {
  // N = 256 at 16 KiB cannot hold the 32-token tile that 228 KiB can.
  auto small = plan_selective_scan({64, 256, 4096}, limits_with(16));
  auto large = plan_selective_scan({64, 256, 4096}, limits_with(228));
  ASSERT_TRUE(small.is_ok() && large.is_ok());
  EXPECT_LT(scan_tiling_from(*small)->tile, scan_tiling_from(*large)->tile);
  EXPECT_EQ(scan_tiling_from(*large)->tile, 32u);
}

TEST(SequenceTiling, ScanStateMovesToSharedMemoryPastTheRegisterBudget) {
  DeviceLimits limits = limits_with(48);
  limits.max_invocations = 4;  // 4 splits of 64 states: 16 each, fits
  auto fits = plan_selective_scan({8, 64, 64}, limits);
  ASSERT_TRUE(fits.is_ok());
  EXPECT_EQ(fits->state_place, "registers");
  auto over = plan_selective_scan({8, 128, 64}, limits);  // 32 each
  ASSERT_TRUE(over.is_ok()) << over.status().to_string();
  EXPECT_EQ(over->state_place, "shared memory");
  EXPECT_TRUE(scan_tiling_from(*over)->state_shared);
  EXPECT_LE(over->shared_bytes, limits.shared_memory_bytes);
}

TEST(SequenceTiling, ScanShortSequenceUsesAShortTile) {
  auto step = plan_selective_scan({16, 16, 1}, limits_with(32));
  ASSERT_TRUE(step.is_ok());
  EXPECT_EQ(scan_tiling_from(*step)->tile, 1u);
}

TEST(SequenceTiling, ScanFailsClearlyWhenNothingFits) {
  DeviceLimits limits = limits_with(1);
  limits.shared_memory_bytes = 256;
  auto tiling = plan_selective_scan({4, 4096, 16}, limits);
  ASSERT_FALSE(tiling.is_ok());
  EXPECT_NE(tiling.status().to_string().find("SelectiveScan"),
            std::string::npos);
  EXPECT_NE(tiling.status().to_string().find("256 B"), std::string::npos);
  EXPECT_FALSE(plan_selective_scan({4, 0, 16}, limits_with(16)).is_ok());
}

TEST(SequenceTiling, ScanConstantsAreChecked) {
  KernelTiling bad;
  bad.constants = {3, 1, 2, 1, 1, 0, 0, 64};  // 3 != 1 * 2
  EXPECT_FALSE(scan_tiling_from(bad).is_ok());
  bad.constants = {1};
  EXPECT_FALSE(scan_tiling_from(bad).is_ok());
}

TEST(SequenceTiling, RetentionFitsEveryLimitAndNamesItself) {
  for (uint32_t kib : kLimitsKib) {
    auto tiling = plan_retention(64, 32, 1000, limits_with(kib, false));
    ASSERT_TRUE(tiling.is_ok()) << tiling.status().to_string();
    EXPECT_LE(tiling->shared_bytes, kib * 1024);
    EXPECT_NE(tiling->summary.find("value columns"), std::string::npos);
    EXPECT_EQ(32 % scan_tiling_from(*tiling)->channels, 0u);
  }
  DeviceLimits tiny = limits_with(1);
  tiny.shared_memory_bytes = 128;
  auto none = plan_retention(4096, 8, 16, tiny);
  ASSERT_FALSE(none.is_ok());
  EXPECT_NE(none.status().to_string().find("Retention"), std::string::npos);
}

TEST(SequenceTiling, ConvFitsEveryLimit) {
  for (uint32_t kib : kLimitsKib) {
    for (int64_t k : {1, 4, 64}) {
      auto tiling = plan_causal_conv(k, 1000, limits_with(kib));
      ASSERT_TRUE(tiling.is_ok()) << tiling.status().to_string();
      EXPECT_LE(tiling->shared_bytes, kib * 1024);
      auto t = conv_tiling_from(*tiling);
      ASSERT_TRUE(t.is_ok());
      EXPECT_EQ(conv_shared_bytes(*t), tiling->shared_bytes);
      EXPECT_EQ(t->kernel, static_cast<uint32_t>(k));
    }
  }
}

TEST(SequenceTiling, ConvFailsClearlyWhenTheWindowDoesNotFit) {
  auto tiling = plan_causal_conv(8192, 16, limits_with(16));
  ASSERT_FALSE(tiling.is_ok());
  EXPECT_NE(tiling.status().to_string().find("CausalConvWithState"),
            std::string::npos);
  EXPECT_FALSE(plan_causal_conv(0, 16, limits_with(16)).is_ok());
}

}  // namespace
}  // namespace seqrt::vulkan
