// Reuse of freed medium-sized tensor blocks. A run allocates the same
// blocks every time (outputs, a KV cache concatenated anew, a kernel's
// buffers); from the C library each is a fresh mapping past its mmap
// threshold: page faults to touch it, and an munmap that stops every thread
// of the process to flush its TLB. On the 2-core VM that was 2.5 ms of a
// 6.8 ms GPT-2 prefill run. Blocks freed here are kept (up to
// kBlockCacheBytes) and handed out again, zero-filled, for the same size.
#pragma once

#include <cstddef>
#include <memory>

namespace seqrt {

// Sizes served from the cache; larger tensors get huge-page mappings of
// their own (tensor.cc), smaller ones the C library's heap.
inline constexpr size_t kCachedBlockMin = size_t{256} << 10;
inline constexpr size_t kCachedBlockMax = size_t{4} << 20;
// The most bytes kept free in the cache; blocks past it are given back.
inline constexpr size_t kBlockCacheBytes = size_t{64} << 20;

// A 64-byte aligned, zero-filled block of at least `bytes` (kCachedBlockMin
// to kCachedBlockMax), reused when one of its rounded size is free; null
// when memory is exhausted. Thread-safe.
std::shared_ptr<void> allocate_cached_block(size_t bytes);

// Bytes now kept free in the cache (for tests).
size_t block_cache_free_bytes();

}  // namespace seqrt
