// The cache of oneDNN primitives the CPU kernels share: creating a primitive
// JIT-compiles code (tens to hundreds of microseconds), so each distinct
// problem is created once and reused by every later run. Keyed by a string
// that spells out everything the primitive depends on (op kind, shapes,
// strides, dtypes, bias, post-ops) and the calling thread's OpenMP thread
// count (a primitive is made for one); thread-safe; bounded, least recently
// used entries go first; hit and miss counters for tests and tuning.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include <oneapi/dnnl/dnnl.hpp>

#include "graph/status.h"

namespace seqrt::cpu::onednn {

// A created primitive and the layouts it was created for (what a caller
// needs to bind its memories: the weights layout may be a blocked one).
struct CachedPrimitive {
  dnnl::primitive primitive;
  dnnl::memory::desc src, weights, dst;
  // Null primitive: oneDNN has no implementation for the key's problem, so
  // the caller takes its fallback path (remembered so as not to ask again).
  bool available() const { return static_cast<bool>(primitive); }
};

struct CacheStats {
  int64_t hits = 0;
  int64_t misses = 0;
  size_t size = 0;
};

class PrimitiveCache {
 public:
  using Maker = std::function<Result<CachedPrimitive>()>;

  explicit PrimitiveCache(size_t capacity) : capacity_(capacity) {}

  // The entry for `key`, made with `make` on a miss. A failing `make` leaves
  // nothing cached and returns its error.
  Result<std::shared_ptr<const CachedPrimitive>> get(const std::string& key,
                                                     const Maker& make);

  CacheStats stats() const;
  void clear();  // drops every entry and zeroes the counters

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const CachedPrimitive>>;

  const size_t capacity_;
  mutable std::mutex mutex_;
  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  int64_t hits_ = 0, misses_ = 0;
};

// The process-wide cache the kernels use (kPrimitiveCacheCapacity entries).
PrimitiveCache& primitive_cache();
inline constexpr size_t kPrimitiveCacheCapacity = 1024;

// Builds cache keys: "matmul|src=2x3:3x1|...". Every part that changes the
// primitive must be added, or two problems would share one primitive.
class KeyBuilder {
 public:
  explicit KeyBuilder(const char* kind) : text_(kind) {}
  KeyBuilder& add(const char* name, const std::vector<int64_t>& values);
  KeyBuilder& add(const char* name, int64_t value);
  KeyBuilder& add(const char* name, float value);
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

}  // namespace seqrt::cpu::onednn
