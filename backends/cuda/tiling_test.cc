#include "backends/cuda/tiling.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

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
    // Retention dk = dv = 256 and 64 x 128, LinearAttention 128 x 128 with
    // four query heads per state.
    for (auto [rows, cols, queries] :
         {std::array<int64_t, 3>{256, 256, 1}, {64, 128, 1}, {128, 128, 4}}) {
      auto tiling = plan_chunked_state(DeviceLimits::with_shared(kib * kKiB),
                                       rows, cols, queries, 64);
      ASSERT_TRUE(tiling.is_ok()) << tiling.status().to_string();
      EXPECT_LE(tiling->shared_bytes, kib * kKiB) << tiling->describe();
      EXPECT_EQ(tiling->shared_bytes, chunked_state_shared_bytes(
                                          rows, queries, tiling->cols_per_block,
                                          tiling->chunk_length));
      EXPECT_GE(tiling->chunk_length, kib >= 48 ? 16 : 1) << tiling->describe();
      EXPECT_LE(tiling->chunk_length, 64);
      EXPECT_GE(tiling->cols_per_block, 1);
      EXPECT_LE(tiling->cols_per_block, cols);
      EXPECT_EQ(tiling->state_home, StateHome::kSharedMemory);
    }
  }
}

TEST(CudaTiling, ChunkedStateKeepsWholeStateWhenRoomAllows) {
  // 128 x 128 stays in the default 48 KiB: 32 columns, 16-step chunks.
  auto big = plan_chunked_state(DeviceLimits::sm90(), 128, 128, 1, 64);
  ASSERT_TRUE(big.is_ok());
  EXPECT_EQ(big->shared_limit, 48 * kKiB) << big->describe();
  EXPECT_EQ(big->cols_per_block, 32);
  EXPECT_EQ(big->chunk_length, 16);
  // With room for everything, the whole state and the hint's chunk.
  auto roomy = plan_chunked_state(DeviceLimits::with_shared(228 * kKiB), 128,
                                  128, 1, 32);
  ASSERT_TRUE(roomy.is_ok());
  EXPECT_EQ(roomy->cols_per_block, 128) << roomy->describe();
  EXPECT_EQ(roomy->chunk_length, 32);
  auto small =
      plan_chunked_state(DeviceLimits::with_shared(16 * kKiB), 64, 128, 1, 64);
  ASSERT_TRUE(small.is_ok());
  EXPECT_LT(small->cols_per_block, 128);
  // A 16 x 16 state takes the hint's chunk whole in 48 KiB.
  auto tiny = plan_chunked_state(DeviceLimits::sm80(), 16, 16, 1, 32);
  ASSERT_TRUE(tiny.is_ok());
  EXPECT_EQ(tiny->cols_per_block, 16);
  EXPECT_EQ(tiny->chunk_length, 32);
  EXPECT_EQ(tiny->shared_limit, 48 * kKiB);
  // The hint is capped at 128 (the chunk² scores).
  auto capped =
      plan_chunked_state(DeviceLimits::with_shared(228 * kKiB), 8, 8, 1, 512);
  ASSERT_TRUE(capped.is_ok());
  EXPECT_EQ(capped->chunk_length, 128);
  EXPECT_EQ(
      plan_chunked_state(DeviceLimits::sm80(), 0, 16, 1, 0).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_TRUE(prefer_chunkwise(kChunkwiseMinSteps));
  EXPECT_FALSE(prefer_chunkwise(1));
}

TEST(CudaTiling, ColumnScanFitsEverySharedLimit) {
  // Retention 16x8 and 256x256, LinearAttention 128x128 with 1 and 8 query
  // heads per kv head, SSD N = 64 x P = 64, and a 1024-row state.
  const std::vector<std::array<int64_t, 3>> problems = {
      {16, 8, 1},    {256, 256, 1}, {128, 128, 1},
      {128, 128, 8}, {64, 64, 1},   {1024, 64, 1}};
  for (uint32_t kib : {16u, 32u, 48u, 228u}) {
    for (auto [rows, cols, queries] : problems) {
      auto tiling = plan_column_scan(DeviceLimits::with_shared(kib * kKiB),
                                     rows, cols, queries, 64);
      if (rows == 1024 && kib == 16) {
        // One step's key, query and decays (12 KiB) beside one warp's
        // 32 rows each of state (4 KiB) is just over 16 KiB.
        EXPECT_EQ(tiling.status().code(), StatusCode::kUnsupported);
        continue;
      }
      ASSERT_TRUE(tiling.is_ok()) << kib << " KiB, " << rows << "x" << cols
                                  << ": " << tiling.status().to_string();
      EXPECT_LE(tiling->shared_bytes, kib * kKiB) << tiling->describe();
      EXPECT_EQ(
          tiling->shared_bytes,
          column_scan_shared_bytes(rows, queries, tiling->cols_per_block,
                                   tiling->threads(), tiling->chunk_length,
                                   tiling->rows_per_thread, tiling->state_home))
          << tiling->describe();
      EXPECT_GE(tiling->threads_per_column * tiling->rows_per_thread, rows);
      EXPECT_EQ(32 % tiling->threads_per_column, 0);
      EXPECT_LE(tiling->threads(), 1024);
      EXPECT_EQ(tiling->threads() % 32, 0);
      EXPECT_GE(tiling->cols_per_block, 1);
      EXPECT_LE(tiling->cols_per_block, cols);
      EXPECT_GE(tiling->chunk_length, 1);
      EXPECT_LE(tiling->chunk_length, 64);
      if (tiling->state_home == StateHome::kRegisters) {
        EXPECT_LE(tiling->rows_per_thread, kMaxRowsPerThread);
      }
    }
  }
}

TEST(CudaTiling, ColumnScanKeepsStateInRegistersUpTo512Rows) {
  for (DeviceLimits limits : {DeviceLimits::sm80(), DeviceLimits::sm90()}) {
    // dk = 128: 8 lanes per column, 16 rows each, in registers; staging
    // fits the default 48 KiB, so no opt-in is needed.
    auto la = plan_column_scan(limits, 128, 128, 1, 64);
    ASSERT_TRUE(la.is_ok()) << la.status().to_string();
    EXPECT_EQ(la->threads_per_column, 8) << la->describe();
    EXPECT_EQ(la->rows_per_thread, 16);
    EXPECT_EQ(la->state_home, StateHome::kRegisters);
    EXPECT_EQ(la->cols_per_block, 32);
    EXPECT_EQ(la->shared_limit, 48 * kKiB);
    EXPECT_GE(la->chunk_length, 8);
    // SSD N = 16: one lane per column.
    auto ssd = plan_column_scan(limits, 16, 64, 1, 256);
    ASSERT_TRUE(ssd.is_ok());
    EXPECT_EQ(ssd->threads_per_column, 1);
    EXPECT_EQ(ssd->cols_per_block, 64);
    // 1024 rows: a whole warp per column, 32 rows each in shared memory.
    auto big = plan_column_scan(limits, 1024, 64, 1, 64);
    ASSERT_TRUE(big.is_ok());
    EXPECT_EQ(big->threads_per_column, 32);
    EXPECT_EQ(big->rows_per_thread, 32);
    EXPECT_EQ(big->state_home, StateHome::kSharedMemory);
  }
  // The chunk hint caps the chunk; the plan never lengthens it.
  auto short_chunk = plan_column_scan(DeviceLimits::sm90(), 16, 16, 1, 4);
  ASSERT_TRUE(short_chunk.is_ok());
  EXPECT_EQ(short_chunk->chunk_length, 4);
}

TEST(CudaTiling, ColumnScanRejectsWhatCannotFit) {
  EXPECT_EQ(plan_column_scan(DeviceLimits::sm90(), 0, 16, 1, 0).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      plan_column_scan(DeviceLimits::sm90(), 16, 16, 0, 0).status().code(),
      StatusCode::kInvalidArgument);
  // 1 KiB cannot hold one step of a 256-row key and query.
  auto tiny = plan_column_scan(DeviceLimits::with_shared(1024), 256, 16, 1, 64);
  EXPECT_EQ(tiny.status().code(), StatusCode::kUnsupported);
}

TEST(CudaTiling, NeuralMemoryPlacementAt48100And228KiB) {
  struct Case {
    int64_t d, m;
    int depth;
    int64_t chunk;
    // Expected momentum home at 48, 100 and 228 KiB; refused when absent.
    std::array<const char*, 3> home;
  };
  const char* regs = "registers";
  const char* shared = "shared memory";
  for (const Case& c : {
           // P = 2048: 256 threads x 8, 9 KiB.
           Case{16, 64, 2, 1, {regs, regs, regs}},
           // Depth 1, P = 4096: 512 threads x 8.
           Case{64, 64, 1, 1, {regs, regs, regs}},
           // P = 8192, weights only: 34 KiB.
           Case{64, 64, 2, 1, {regs, regs, regs}},
           // P = 8192 with the anchor (chunk 16): 66 KiB, opt-in only.
           Case{64, 64, 2, 16, {nullptr, regs, regs}},
           // P = 16384 needs 2048 threads in registers: momentum in shared
           // memory beside the weights, 131 KiB.
           Case{64, 128, 2, 1, {nullptr, nullptr, shared}},
           // P = 32768 (m = 4d): weights and momentum 260 KiB, nowhere.
           Case{64, 256, 2, 1, {nullptr, nullptr, nullptr}},
       }) {
    const std::array<uint32_t, 3> limits = {48, 100, 228};
    for (size_t i = 0; i < limits.size(); ++i) {
      const uint32_t limit = limits[i] * kKiB;
      auto tiling = plan_neural_memory(DeviceLimits::with_shared(limit), c.d,
                                       c.m, c.depth, c.chunk);
      const std::string where =
          "d " + std::to_string(c.d) + " m " + std::to_string(c.m) + " depth " +
          std::to_string(c.depth) + " chunk " + std::to_string(c.chunk) +
          " at " + std::to_string(limits[i]) + " KiB";
      if (c.home[i] == nullptr) {
        ASSERT_FALSE(tiling.is_ok()) << where << ": " << tiling->describe();
        EXPECT_EQ(tiling.status().code(), StatusCode::kUnsupported) << where;
        EXPECT_NE(tiling.status().message().find("[NeuralMemory]"),
                  std::string::npos);
        EXPECT_NE(tiling.status().message().find(std::to_string(limit)),
                  std::string::npos)
            << tiling.status().message();
        continue;
      }
      ASSERT_TRUE(tiling.is_ok()) << where << ": " << tiling.status().message();
      EXPECT_STREQ(state_home_name(tiling->momentum_home), c.home[i]) << where;
      EXPECT_LE(tiling->shared_bytes, limit) << where;
      EXPECT_EQ(
          tiling->shared_bytes,
          neural_memory_shared_bytes(c.d, c.m, c.depth, tiling->anchor_stored,
                                     tiling->momentum_home));
      EXPECT_EQ(tiling->anchor_stored, c.chunk > 1) << where;
      EXPECT_EQ(tiling->threads % 32, 0) << where;
      EXPECT_LE(tiling->threads, 1024) << where;
      const int64_t params = neural_memory_params(c.d, c.m, c.depth);
      if (tiling->momentum_home == StateHome::kRegisters) {
        // Every weight has one owner, within the register budget.
        EXPECT_GE(int64_t(tiling->threads) * tiling->momentum_per_thread,
                  params)
            << where;
        EXPECT_LE(tiling->momentum_per_thread, kMaxMomentumPerThread);
      } else {
        EXPECT_EQ(tiling->momentum_per_thread, 0);
      }
    }
  }
}

TEST(CudaTiling, NeuralMemoryPrefersDefaultSharedMemory) {
  // 34 KiB fits sm_90's default 48 KiB: no opt-in.
  auto small = plan_neural_memory(DeviceLimits::sm90(), 64, 64, 2, 1);
  ASSERT_TRUE(small.is_ok());
  EXPECT_EQ(small->shared_limit, 48 * kKiB);
  // 66 KiB (anchor stored) needs the opt-in limit on sm_80 and sm_90.
  for (const DeviceLimits& limits :
       {DeviceLimits::sm80(), DeviceLimits::sm90()}) {
    auto large = plan_neural_memory(limits, 64, 64, 2, 64);
    ASSERT_TRUE(large.is_ok());
    EXPECT_EQ(large->shared_limit, limits.shared_per_block_optin);
    EXPECT_GT(large->shared_bytes, 48 * kKiB);
  }
  EXPECT_EQ(
      plan_neural_memory(DeviceLimits::sm90(), 0, 16, 2, 1).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(
      plan_neural_memory(DeviceLimits::sm90(), 16, 16, 3, 1).status().code(),
      StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace seqrt::cuda
