#include "backends/cuda/tiling.h"

#include <gtest/gtest.h>

namespace seqrt::cuda {
namespace {

constexpr uint32_t kKiB = 1024;

TEST(CudaTiling, ScanFitsEverySharedLimit) {
  for (uint32_t kib : {16u, 32u, 48u, 228u}) {
    for (int64_t n : {1, 16, 64, 128, 256}) {
      auto tiling =
          plan_selective_scan(DeviceLimits::with_shared(kib * kKiB), 5120, n);
      ASSERT_TRUE(tiling.is_ok())
          << kib << " KiB, N " << n << ": " << tiling.status().to_string();
      EXPECT_LE(tiling->shared_bytes, kib * kKiB) << tiling->describe();
      EXPECT_GE(tiling->threads_per_channel * tiling->states_per_thread, n);
      EXPECT_LE(tiling->states_per_thread, kMaxStatesPerThread);
      EXPECT_EQ(32 % tiling->threads_per_channel, 0);
      EXPECT_LE(tiling->threads(), 1024);
      EXPECT_EQ(tiling->state_home, StateHome::kRegisters);
    }
  }
}

TEST(CudaTiling, ScanChunkGrowsWithSharedMemory) {
  auto small =
      plan_selective_scan(DeviceLimits::with_shared(16 * kKiB), 64, 128);
  auto large =
      plan_selective_scan(DeviceLimits::with_shared(228 * kKiB), 64, 128);
  ASSERT_TRUE(small.is_ok() && large.is_ok());
  EXPECT_LT(small->chunk_length, large->chunk_length);
  // N = 16: one thread per channel, all 16 states in its registers.
  auto mamba = plan_selective_scan(DeviceLimits::sm80(), 5120, 16);
  ASSERT_TRUE(mamba.is_ok());
  EXPECT_EQ(mamba->threads_per_channel, 1);
  EXPECT_EQ(mamba->states_per_thread, 16);
  EXPECT_EQ(mamba->channels_per_block, 128);
  // Never more channels per block than a group has.
  auto narrow = plan_selective_scan(DeviceLimits::sm80(), 3, 16);
  ASSERT_TRUE(narrow.is_ok());
  EXPECT_EQ(narrow->channels_per_block, 3);
}

TEST(CudaTiling, ScanRejectsWhatCannotFit) {
  auto huge_state = plan_selective_scan(DeviceLimits::sm90(), 64, 1024);
  EXPECT_EQ(huge_state.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(huge_state.status().message().find("N = 1024"), std::string::npos);
  auto tiny_shared =
      plan_selective_scan(DeviceLimits::with_shared(1024), 64, 256);
  EXPECT_EQ(tiny_shared.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(plan_selective_scan(DeviceLimits::sm90(), 0, 16).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(CudaTiling, AttentionUsesOptInSharedMemoryOnSm80AndSm90) {
  for (DeviceLimits limits : {DeviceLimits::sm80(), DeviceLimits::sm90()}) {
    auto tiling = plan_attention(limits, 128, 128, 4096, 4096, 128);
    ASSERT_TRUE(tiling.is_ok()) << tiling.status().to_string();
    EXPECT_EQ(tiling->block_k, 64) << tiling->describe();
    EXPECT_GT(tiling->shared_bytes, 48 * kKiB);
    EXPECT_LE(tiling->shared_bytes, limits.shared_per_block_optin);
    EXPECT_EQ(tiling->kv_splits, 1);  // 128 x 256 query blocks fill the GPU
  }
}

TEST(CudaTiling, AttentionFitsEverySharedLimit) {
  for (uint32_t kib : {16u, 32u, 48u, 228u}) {
    for (int64_t d : {32, 64, 80, 128}) {
      auto tiling = plan_attention(DeviceLimits::with_shared(kib * kKiB), d, d,
                                   1000, 1000, 8);
      ASSERT_TRUE(tiling.is_ok())
          << kib << " KiB, d " << d << ": " << tiling.status().to_string();
      EXPECT_LE(tiling->shared_bytes, kib * kKiB) << tiling->describe();
      EXPECT_GE(tiling->block_k, kib >= 48 ? 32 : 8) << tiling->describe();
      EXPECT_LE(tiling->block_q, 4 * tiling->warps);
    }
  }
  // Not even 8 keys of d = dv = 256 fit 16 KiB.
  auto too_big =
      plan_attention(DeviceLimits::with_shared(16 * kKiB), 256, 256, 64, 64, 8);
  EXPECT_EQ(too_big.status().code(), StatusCode::kUnsupported);
}

TEST(CudaTiling, DecodeSplitsTheKeys) {
  // One query row, 8 heads, 4k cached keys: 8 blocks would idle 124 SMs.
  auto tiling = plan_attention(DeviceLimits::sm90(), 128, 128, 1, 4096, 8);
  ASSERT_TRUE(tiling.is_ok());
  EXPECT_EQ(tiling->block_q, 4);
  EXPECT_EQ(tiling->kv_splits, 33);  // ceil(2 * 132 / 8)
  // Never more splits than key tiles.
  auto short_cache = plan_attention(DeviceLimits::sm90(), 64, 64, 1, 100, 1);
  ASSERT_TRUE(short_cache.is_ok());
  EXPECT_EQ(short_cache->kv_splits, 2);  // 100 keys in 64-row tiles
}

TEST(CudaTiling, ChunkedStateFitsEverySharedLimit) {
  for (uint32_t kib : {16u, 32u, 48u, 228u}) {
    // Retention dk = dv = 256, SSD P = 64 x N = 128, NeuralMemory 64 x 256.
    for (auto [rows, cols] :
         {std::pair<int64_t, int64_t>{256, 256}, {64, 128}, {64, 256}}) {
      auto tiling = plan_chunked_state(DeviceLimits::with_shared(kib * kKiB),
                                       rows, cols, 64);
      ASSERT_TRUE(tiling.is_ok()) << tiling.status().to_string();
      EXPECT_LE(tiling->shared_bytes, kib * kKiB) << tiling->describe();
      EXPECT_GE(tiling->chunk_length, kib >= 48 ? 16 : 1) << tiling->describe();
      EXPECT_LE(tiling->chunk_length, 64);
      EXPECT_GE(tiling->cols_per_block, 1);
      EXPECT_LE(tiling->cols_per_block, cols);
    }
  }
}

TEST(CudaTiling, ChunkedStateKeepsWholeStateWhenRoomAllows) {
  auto big = plan_chunked_state(DeviceLimits::sm90(), 128, 128, 256);
  ASSERT_TRUE(big.is_ok());
  EXPECT_EQ(big->cols_per_block, 128) << big->describe();
  EXPECT_EQ(big->state_home, StateHome::kSharedMemory);
  auto small =
      plan_chunked_state(DeviceLimits::with_shared(16 * kKiB), 64, 128, 64);
  ASSERT_TRUE(small.is_ok());
  EXPECT_LT(small->cols_per_block, 128);
  // A 16 x 16 state lives in registers.
  auto tiny = plan_chunked_state(DeviceLimits::sm80(), 16, 16, 0);
  ASSERT_TRUE(tiny.is_ok());
  EXPECT_EQ(tiny->state_home, StateHome::kRegisters);
  EXPECT_EQ(plan_chunked_state(DeviceLimits::sm80(), 0, 16, 0).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace seqrt::cuda
