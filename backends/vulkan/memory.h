// Device memory: buffers sub-allocated from a few large VkDeviceMemory
// blocks, each covered by one VkBuffer, so a tensor is a BufferSlice (an
// aligned range of a block's buffer). Device-local blocks hold tensors;
// host-visible blocks are the staging memory for uploads and downloads.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "backends/vulkan/device.h"

namespace seqrt::vulkan {

enum class MemoryPlace { kDevice, kStaging };

class Allocator;

// A sub-allocation; returns its range to the allocator when destroyed.
class Allocation {
 public:
  Allocation(Allocator* owner, int block, BufferSlice slice, void* mapped)
      : owner_(owner), block_(block), slice_(slice), mapped_(mapped) {}
  ~Allocation();
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;

  const BufferSlice& slice() const { return slice_; }
  // The host address of a staging allocation; null for device memory.
  void* mapped() const { return mapped_; }

 private:
  Allocator* owner_;
  int block_;
  BufferSlice slice_;
  void* mapped_;
};

class Allocator {
 public:
  // Blocks are at least `block_bytes`; a larger request gets its own block.
  Allocator(std::shared_ptr<Device> device, VkDeviceSize block_bytes);
  ~Allocator();  // every Allocation must be gone by then

  // An aligned range of at least `bytes` (never empty: 0 bytes still gets
  // one alignment unit, so every slice can be bound). `doing` names the
  // purpose in errors ("uploading constant 'w'").
  Result<std::unique_ptr<Allocation>> allocate(VkDeviceSize bytes,
                                               MemoryPlace place,
                                               const char* doing);

  VkDeviceSize alignment() const { return alignment_; }
  int block_count() const;
  VkDeviceSize reserved_bytes() const;  // sum of block sizes

 private:
  friend class Allocation;
  struct Range {
    VkDeviceSize offset, bytes;
  };
  struct Block {
    MemoryPlace place;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceSize bytes = 0;
    void* mapped = nullptr;
    std::vector<Range> free;  // sorted by offset, never adjacent
  };
  Result<int> add_block(VkDeviceSize bytes, MemoryPlace place,
                        const char* doing);
  void release(int block, VkDeviceSize offset, VkDeviceSize bytes);
  Result<uint32_t> memory_type(uint32_t allowed, MemoryPlace place) const;

  std::shared_ptr<Device> device_;
  VkDeviceSize block_bytes_;
  VkDeviceSize alignment_;
  mutable std::mutex mutex_;
  std::vector<Block> blocks_;
};

}  // namespace seqrt::vulkan
