// The Attention planner (tiling.h, tiling_attention.cc) at the shared-memory
// limits of DESIGN.md §5.2: 16, 32, 48 and 228 KiB. Host code only.
#include <gtest/gtest.h>

#include "backends/vulkan/tiling.h"
#include "backends/vulkan/tiling_testing.h"

namespace seqrt::vulkan {
namespace {

TEST(AttentionTiling, FitsEveryLimitWithAccumulatorsInRegisters) {
  for (uint32_t kib : {16u, 32u, 48u, 228u}) {
    for (bool subgroup : {true, false}) {
      for (int64_t d : {32, 64, 80, 128}) {
        SCOPED_TRACE(testing::Message()
                     << kib << " KiB, d " << d << ", subgroup " << subgroup);
        auto tiling = plan_attention({d, d, 4 * 1000, 1000, 1000},
                                     limits_with(kib, subgroup));
        ASSERT_TRUE(tiling.is_ok()) << tiling.status().to_string();
        EXPECT_LE(tiling->shared_bytes, kib * 1024);
        EXPECT_EQ(tiling->state_place, "registers");
        auto t = attention_tiling_from(*tiling);
        ASSERT_TRUE(t.is_ok());
        EXPECT_EQ(attention_shared_bytes(*t), tiling->shared_bytes);
        EXPECT_GE(t->splits * t->query_per_invocation, d);
        EXPECT_LE(t->values_per_invocation, kRegisterStateFloats);
        EXPECT_LE(t->invocations, kTargetInvocations);
        // K and V tiles of 16 keys at d = 128 alone fill 16 KiB.
        EXPECT_GE(t->tile, kib == 16 && d == 128 ? 8u : 16u);
        EXPECT_EQ(t->key_splits, 1u) << "a prefill needs no split-K";
        if (t->subgroup) {
          EXPECT_TRUE(subgroup);
          EXPECT_EQ(t->invocations % 32, 0u);
        }
      }
    }
  }
}

TEST(AttentionTiling, TileGrowsWithTheLimit) {
  auto small = attention_tiling_from(
      *plan_attention({128, 128, 512, 128, 128}, limits_with(16)));
  auto large = attention_tiling_from(
      *plan_attention({128, 128, 512, 128, 128}, limits_with(228)));
  ASSERT_TRUE(small.is_ok() && large.is_ok());
  EXPECT_LT(small->tile * small->rows, large->tile * large->rows);
}

TEST(AttentionTiling, DecodeOverALongCacheSplitsTheKeys) {
  auto plan = plan_attention({64, 64, 4, 1, 4000}, limits_with(48));
  ASSERT_TRUE(plan.is_ok());
  auto t = attention_tiling_from(*plan);
  ASSERT_TRUE(t.is_ok());
  EXPECT_GT(t->key_splits, 1u);
  EXPECT_EQ(t->keys_per_split % t->tile, 0u);
  EXPECT_GE(uint64_t{t->key_splits} * t->keys_per_split, 4000u);
  EXPECT_LT(uint64_t{t->key_splits - 1} * t->keys_per_split, 4000u);
  // A short cache, or more than one query, keeps one workgroup per row.
  EXPECT_EQ(attention_tiling_from(
                *plan_attention({64, 64, 4, 1, 100}, limits_with(48)))
                ->key_splits,
            1u);
  EXPECT_EQ(attention_tiling_from(
                *plan_attention({64, 64, 64, 16, 4000}, limits_with(48)))
                ->key_splits,
            1u);
}

TEST(AttentionTiling, LongKeyRangesAreSplitUnderTheLoopBudget) {
  // 200000 keys per row are more loop iterations than one invocation may
  // run on llvmpipe (tiling.h): split-K runs even for a prefill.
  auto plan = plan_attention({64, 64, 4 * 64, 64, 200000, 1}, limits_with(48));
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  auto t = attention_tiling_from(*plan);
  ASSERT_TRUE(t.is_ok());
  EXPECT_GT(t->key_splits, 1u);
  EXPECT_GE(uint64_t{t->key_splits} * t->keys_per_split, 200000u);
  // Partials past one binding's range are a clear error.
  DeviceLimits narrow = limits_with(48);
  narrow.max_storage_buffer_range = 1 << 20;
  auto big = plan_attention({64, 64, 4 * 4096, 4096, 200000, 8}, narrow);
  ASSERT_FALSE(big.is_ok());
  EXPECT_NE(big.status().message().find("maxStorageBufferRange"),
            std::string::npos);
}

TEST(AttentionTiling, ClearErrorWhenNothingFits) {
  DeviceLimits tiny = limits_with(1);
  tiny.shared_memory_bytes = 256;
  auto plan = plan_attention({128, 128, 16, 16, 16}, tiny);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(plan.status().message().find("Attention"), std::string::npos);
  EXPECT_NE(plan.status().message().find("256 B"), std::string::npos);
  EXPECT_FALSE(plan_attention({0, 8, 1, 1, 1}, limits_with(16)).is_ok());
}

}  // namespace
}  // namespace seqrt::vulkan
