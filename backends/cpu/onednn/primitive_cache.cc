#include "backends/cpu/onednn/primitive_cache.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/cpu/parallel.h"

namespace seqrt::cpu::onednn {

Result<std::shared_ptr<const CachedPrimitive>> PrimitiveCache::get(
    const std::string& problem_key, const Maker& make) {
  // A primitive partitions its work (and sizes its scratchpad) for the thread
  // count it is created under, and the count changes from node to node
  // (serial small nodes, serial spells on a busy machine): one entry each.
  const std::string key =
      problem_key + "|threads=" + std::to_string(max_threads());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = index_.find(key);
    if (found != index_.end()) {
      ++hits_;
      lru_.splice(lru_.begin(), lru_, found->second);
      return found->second->second;
    }
    ++misses_;
  }
  // Made outside the lock: JIT compilation is slow and other keys need not
  // wait. Two threads missing on one key both make it; the first one stored
  // wins, which is harmless.
  SEQRT_ASSIGN_OR_RETURN(CachedPrimitive made, make());
  auto entry = std::make_shared<const CachedPrimitive>(std::move(made));
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = index_.find(key);
  if (found != index_.end()) return found->second->second;
  lru_.emplace_front(key, entry);
  index_[key] = lru_.begin();
  while (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return entry;
}

CacheStats PrimitiveCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return CacheStats{hits_, misses_, lru_.size()};
}

void PrimitiveCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  lru_.clear();
  index_.clear();
  hits_ = misses_ = 0;
}

PrimitiveCache& primitive_cache() {
  // Never destroyed: kernels of static sessions may still run at exit.
  static PrimitiveCache* cache = new PrimitiveCache(kPrimitiveCacheCapacity);
  return *cache;
}

KeyBuilder& KeyBuilder::add(const char* name,
                            const std::vector<int64_t>& values) {
  text_ += fmt::format("|{}={}", name, fmt::join(values, "x"));
  return *this;
}

KeyBuilder& KeyBuilder::add(const char* name, int64_t value) {
  text_ += fmt::format("|{}={}", name, value);
  return *this;
}

KeyBuilder& KeyBuilder::add(const char* name, float value) {
  // %a: exact, so keys never merge two scales that print alike.
  text_ += fmt::format("|{}={:a}", name, value);
  return *this;
}

}  // namespace seqrt::cpu::onednn
