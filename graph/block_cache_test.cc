// Freed medium-sized blocks come back zero-filled for the same size, and the
// cache keeps no more than its bound.
#include "graph/block_cache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "graph/tensor.h"

namespace seqrt {
namespace {

bool all_zero(const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}

TEST(BlockCache, AFreedBlockIsReusedZeroFilled) {
  const size_t bytes = kCachedBlockMin + 1000;
  const void* first = nullptr;
  {
    std::shared_ptr<void> block = allocate_cached_block(bytes);
    ASSERT_NE(block, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block.get()) % 64, 0u);
    std::memset(block.get(), 0xab, bytes);
    first = block.get();
  }
  EXPECT_GE(block_cache_free_bytes(), bytes);
  std::shared_ptr<void> again = allocate_cached_block(bytes - 10);
  EXPECT_EQ(again.get(), first) << "the same rounded size reuses the block";
  EXPECT_TRUE(all_zero(again.get(), bytes - 10));
}

TEST(BlockCache, TensorsOfThatSizeAreZeroFilledEveryTime) {
  for (int round = 0; round < 3; ++round) {
    Tensor t = Tensor::allocate(DType::kF32, {1, 4, 256, 64}).value();
    ASSERT_TRUE(all_zero(t.data(), t.byte_size())) << "round " << round;
    std::memset(t.mutable_data(), 0x7f, t.byte_size());
  }
}

TEST(BlockCache, KeepsNoMoreThanItsBound) {
  std::vector<std::shared_ptr<void>> blocks;
  for (size_t held = 0; held < 2 * kBlockCacheBytes; held += kCachedBlockMax) {
    blocks.push_back(allocate_cached_block(kCachedBlockMax));
    ASSERT_NE(blocks.back(), nullptr);
  }
  blocks.clear();
  EXPECT_LE(block_cache_free_bytes(), kBlockCacheBytes);
}

}  // namespace
}  // namespace seqrt
