#include "backends/vulkan/memory.h"

#include <algorithm>

namespace seqrt::vulkan {
namespace {

VkDeviceSize round_up(VkDeviceSize value, VkDeviceSize multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

}  // namespace

Allocation::~Allocation() {
  owner_->release(block_, slice_.offset, slice_.bytes);
}

Allocator::Allocator(std::shared_ptr<Device> device, VkDeviceSize block_bytes)
    : device_(std::move(device)), block_bytes_(block_bytes) {
  // 64 also keeps every slice a multiple of 4 bytes (whole shader words).
  alignment_ = std::max<VkDeviceSize>(
      64, device_->limits().storage_buffer_offset_alignment);
}

Allocator::~Allocator() {
  const Functions& fn = device_->fn();
  for (Block& block : blocks_) {
    if (block.mapped != nullptr)
      fn.vkUnmapMemory(device_->handle(), block.memory);
    fn.vkDestroyBuffer(device_->handle(), block.buffer, nullptr);
    fn.vkFreeMemory(device_->handle(), block.memory, nullptr);
  }
}

Result<uint32_t> Allocator::memory_type(uint32_t allowed,
                                        MemoryPlace place) const {
  const VkPhysicalDeviceMemoryProperties& props = device_->memory_properties();
  VkMemoryPropertyFlags wanted = place == MemoryPlace::kDevice
                                     ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
                                     : VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                           VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i) {
    if ((allowed & (1u << i)) != 0 &&
        (props.memoryTypes[i].propertyFlags & wanted) == wanted) {
      return i;
    }
  }
  return unsupported(
      "vulkan: the device has no {} memory type for buffers",
      place == MemoryPlace::kDevice ? "device-local" : "host-visible coherent");
}

Result<int> Allocator::add_block(VkDeviceSize bytes, MemoryPlace place,
                                 const char* doing) {
  const Functions& fn = device_->fn();
  VkDevice dev = device_->handle();
  if (device_->take_fault(Fault::kOutOfMemory)) {
    return vk_error(VK_ERROR_OUT_OF_DEVICE_MEMORY, doing);
  }
  Block block;
  block.place = place;
  block.bytes = bytes;
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = bytes;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
               VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  SEQRT_VK_CHECK(fn.vkCreateBuffer(dev, &info, nullptr, &block.buffer), doing);
  VkMemoryRequirements needs;
  fn.vkGetBufferMemoryRequirements(dev, block.buffer, &needs);
  Result<uint32_t> type = memory_type(needs.memoryTypeBits, place);
  if (!type.is_ok()) {
    fn.vkDestroyBuffer(dev, block.buffer, nullptr);
    return type.status();
  }
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = needs.size;
  alloc.memoryTypeIndex = *type;
  VkResult result = fn.vkAllocateMemory(dev, &alloc, nullptr, &block.memory);
  if (result == VK_SUCCESS) {
    result = fn.vkBindBufferMemory(dev, block.buffer, block.memory, 0);
  }
  if (result == VK_SUCCESS && place == MemoryPlace::kStaging) {
    result =
        fn.vkMapMemory(dev, block.memory, 0, VK_WHOLE_SIZE, 0, &block.mapped);
  }
  if (result != VK_SUCCESS) {
    fn.vkDestroyBuffer(dev, block.buffer, nullptr);
    if (block.memory != VK_NULL_HANDLE) {
      fn.vkFreeMemory(dev, block.memory, nullptr);
    }
    return vk_error(result, doing);
  }
  block.free.push_back({0, bytes});
  blocks_.push_back(std::move(block));
  return static_cast<int>(blocks_.size() - 1);
}

Result<std::unique_ptr<Allocation>> Allocator::allocate(VkDeviceSize bytes,
                                                        MemoryPlace place,
                                                        const char* doing) {
  VkDeviceSize size = round_up(std::max<VkDeviceSize>(bytes, 1), alignment_);
  std::lock_guard<std::mutex> lock(mutex_);
  int chosen = -1;
  size_t range_index = 0;
  for (size_t b = 0; b < blocks_.size() && chosen < 0; ++b) {
    if (blocks_[b].place != place) continue;
    for (size_t r = 0; r < blocks_[b].free.size(); ++r) {
      if (blocks_[b].free[r].bytes >= size) {
        chosen = static_cast<int>(b);
        range_index = r;
        break;
      }
    }
  }
  if (chosen < 0) {
    SEQRT_ASSIGN_OR_RETURN(
        chosen, add_block(std::max(size, block_bytes_), place, doing));
    range_index = 0;
  }
  Block& block = blocks_[chosen];
  Range& range = block.free[range_index];
  BufferSlice slice{block.buffer, range.offset, size};
  range.offset += size;
  range.bytes -= size;
  if (range.bytes == 0) block.free.erase(block.free.begin() + range_index);
  void* mapped = block.mapped == nullptr
                     ? nullptr
                     : static_cast<uint8_t*>(block.mapped) + slice.offset;
  return std::make_unique<Allocation>(this, chosen, slice, mapped);
}

void Allocator::release(int block_index, VkDeviceSize offset,
                        VkDeviceSize bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Range>& free = blocks_[block_index].free;
  auto it = std::lower_bound(
      free.begin(), free.end(), offset,
      [](const Range& r, VkDeviceSize at) { return r.offset < at; });
  it = free.insert(it, Range{offset, bytes});
  // Merge with the following and the preceding range.
  if (it + 1 != free.end() && it->offset + it->bytes == (it + 1)->offset) {
    it->bytes += (it + 1)->bytes;
    free.erase(it + 1);
  }
  if (it != free.begin() && (it - 1)->offset + (it - 1)->bytes == it->offset) {
    (it - 1)->bytes += it->bytes;
    free.erase(it);
  }
}

int Allocator::block_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(blocks_.size());
}

VkDeviceSize Allocator::reserved_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  VkDeviceSize total = 0;
  for (const Block& block : blocks_) total += block.bytes;
  return total;
}

}  // namespace seqrt::vulkan
