#include "graph/block_cache.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace seqrt {
namespace {

constexpr size_t kAlignment = 64;
// Sizes are rounded up to this, so that nearby sizes share blocks.
constexpr size_t kGranule = size_t{64} << 10;

class BlockCache {
 public:
  void* take(size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = free_.find(size);
    if (found == free_.end()) return nullptr;
    void* block = found->second;
    free_.erase(found);
    free_bytes_ -= size;
    return block;
  }

  void give(void* block, size_t size) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (free_bytes_ + size <= kBlockCacheBytes) {
        free_.emplace(size, block);
        free_bytes_ += size;
        return;
      }
    }
    std::free(block);
  }

  size_t free_bytes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return free_bytes_;
  }

 private:
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;  // rounded size -> block
  size_t free_bytes_ = 0;
};

// Never destroyed: a tensor freed during static destruction still finds it.
BlockCache& cache() {
  static BlockCache* the_cache = new BlockCache();
  return *the_cache;
}

}  // namespace

std::shared_ptr<void> allocate_cached_block(size_t bytes) {
  const size_t size = (bytes + kGranule - 1) / kGranule * kGranule;
  void* block = cache().take(size);
  if (block != nullptr) {
    std::memset(block, 0, bytes);
  } else {
    block = std::aligned_alloc(kAlignment, size);
    if (block == nullptr) return nullptr;
    std::memset(block, 0, size);
  }
  return std::shared_ptr<void>(block,
                               [size](void* p) { cache().give(p, size); });
}

size_t block_cache_free_bytes() { return cache().free_bytes(); }

}  // namespace seqrt
