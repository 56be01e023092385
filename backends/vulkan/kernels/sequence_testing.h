// Test support for the sequence kernels: a Recorder that records every
// dispatch of one node into a command buffer (a full compute barrier
// before each command), runs it once, and keeps every tensor in
// host-visible memory so tests can fill and read it directly. It runs one
// kernel on its own, next to the op's reference kernel, on any device the
// backend can open (lavapipe in CI).
#pragma once

#include <cstring>
#include <map>
#include <memory>

#include "backends/vulkan/device.h"
#include "backends/vulkan/memory.h"
#include "backends/vulkan/pipelines.h"
#include "graph/tensor.h"

namespace seqrt::vulkan::sequence_testing {

class TestRecorder : public Recorder {
 public:
  static Result<std::unique_ptr<TestRecorder>> create(
      std::shared_ptr<Device> device, std::shared_ptr<Pipelines> pipelines) {
    std::unique_ptr<TestRecorder> r(new TestRecorder(device, pipelines));
    const Functions& fn = device->fn();
    VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool.queueFamilyIndex = device->queue_family();
    SEQRT_VK_CHECK(
        fn.vkCreateCommandPool(device->handle(), &pool, nullptr, &r->pool_),
        "creating a test command pool");
    VkCommandBufferAllocateInfo alloc{
        VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = r->pool_;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    SEQRT_VK_CHECK(
        fn.vkAllocateCommandBuffers(device->handle(), &alloc, &r->commands_),
        "allocating a test command buffer");
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1024};
    VkDescriptorPoolCreateInfo dpool{
        VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpool.maxSets = 64;
    dpool.poolSizeCount = 1;
    dpool.pPoolSizes = &size;
    SEQRT_VK_CHECK(fn.vkCreateDescriptorPool(device->handle(), &dpool, nullptr,
                                             &r->descriptors_),
                   "creating a test descriptor pool");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    SEQRT_VK_CHECK(fn.vkBeginCommandBuffer(r->commands_, &begin),
                   "beginning the test command buffer");
    return r;
  }

  ~TestRecorder() override {
    const Functions& fn = device_->fn();
    buffers_.clear();
    if (descriptors_ != VK_NULL_HANDLE) {
      fn.vkDestroyDescriptorPool(device_->handle(), descriptors_, nullptr);
    }
    if (pool_ != VK_NULL_HANDLE) {
      fn.vkDestroyCommandPool(device_->handle(), pool_, nullptr);
    }
  }

  const DeviceLimits& limits() const override { return device_->limits(); }

  Status dispatch(const Dispatch& d) override {
    const Functions& fn = device_->fn();
    const auto bindings =
        static_cast<uint32_t>(d.reads.size() + d.writes.size());
    SEQRT_ASSIGN_OR_RETURN(
        Pipeline pipeline,
        pipelines_->get(d.shader, d.specialization, bindings));
    VkDescriptorSetAllocateInfo alloc{
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    alloc.descriptorPool = descriptors_;
    alloc.descriptorSetCount = 1;
    alloc.pSetLayouts = &pipeline.set_layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    SEQRT_VK_CHECK(fn.vkAllocateDescriptorSets(device_->handle(), &alloc, &set),
                   "allocating a test descriptor set");
    std::vector<VkDescriptorBufferInfo> infos;
    for (const auto* list : {&d.reads, &d.writes}) {
      for (const BufferSlice& s : *list) {
        if (s.empty())
          return invalid_argument("{}: an empty binding", d.shader);
        // Whole words, as the backend's recorder binds them (a bool mask
        // of 378 bytes is read as 95 words).
        infos.push_back({s.buffer, s.offset, (s.bytes + 3) / 4 * 4});
      }
    }
    std::vector<VkWriteDescriptorSet> writes(infos.size());
    for (uint32_t i = 0; i < infos.size(); ++i) {
      writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[i].dstSet = set;
      writes[i].dstBinding = i;
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[i].pBufferInfo = &infos[i];
    }
    fn.vkUpdateDescriptorSets(device_->handle(),
                              static_cast<uint32_t>(writes.size()),
                              writes.data(), 0, nullptr);
    barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
    fn.vkCmdBindPipeline(commands_, VK_PIPELINE_BIND_POINT_COMPUTE,
                         pipeline.pipeline);
    fn.vkCmdBindDescriptorSets(commands_, VK_PIPELINE_BIND_POINT_COMPUTE,
                               pipeline.layout, 0, 1, &set, 0, nullptr);
    if (!d.push_constants.empty()) {
      fn.vkCmdPushConstants(commands_, pipeline.layout,
                            VK_SHADER_STAGE_COMPUTE_BIT, 0,
                            static_cast<uint32_t>(d.push_constants.size()),
                            d.push_constants.data());
    }
    fn.vkCmdDispatch(commands_, d.groups[0], d.groups[1], d.groups[2]);
    ++dispatches_;
    return Status::ok();
  }

  Result<BufferSlice> scratch(VkDeviceSize bytes) override {
    return allocate(bytes);
  }

  Status copy(const BufferSlice& src, const BufferSlice& dst) override {
    barrier(VK_PIPELINE_STAGE_TRANSFER_BIT);
    VkBufferCopy region{src.offset, dst.offset, std::min(src.bytes, dst.bytes)};
    device_->fn().vkCmdCopyBuffer(commands_, src.buffer, dst.buffer, 1,
                                  &region);
    return Status::ok();
  }

  Status fill(const BufferSlice& dst, uint32_t word) override {
    barrier(VK_PIPELINE_STAGE_TRANSFER_BIT);
    device_->fn().vkCmdFillBuffer(commands_, dst.buffer, dst.offset, dst.bytes,
                                  word);
    return Status::ok();
  }

  // Host-visible memory of `bytes` (zeroed), readable after run().
  Result<BufferSlice> allocate(VkDeviceSize bytes) {
    SEQRT_ASSIGN_OR_RETURN(
        auto allocation,
        allocator_.allocate(std::max<VkDeviceSize>(bytes, 4),
                            MemoryPlace::kStaging, "a sequence-kernel test"));
    BufferSlice slice = allocation->slice();
    slice.bytes = std::max<VkDeviceSize>(bytes, 4);
    std::memset(allocation->mapped(), 0, slice.bytes);
    buffers_[key(slice)] = std::move(allocation);
    return slice;
  }

  // A device copy of `tensor` (fp32); an empty slice for an empty tensor.
  Result<BufferSlice> upload(const Tensor& tensor) {
    if (tensor.empty()) return BufferSlice{};
    SEQRT_ASSIGN_OR_RETURN(BufferSlice slice, allocate(tensor.byte_size()));
    std::memcpy(mapped(slice), tensor.data(), tensor.byte_size());
    return slice;
  }

  Result<Tensor> download(const BufferSlice& slice, std::vector<int64_t> dims) {
    SEQRT_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(DType::kF32, dims));
    std::memcpy(out.mutable_data(), mapped(slice), out.byte_size());
    return out;
  }

  uint32_t word(const BufferSlice& slice) {
    uint32_t w = 0;
    std::memcpy(&w, mapped(slice), 4);
    return w;
  }

  // Ends the command buffer, runs it and waits.
  Status run() {
    const Functions& fn = device_->fn();
    VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    to_host.srcAccessMask =
        VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    fn.vkCmdPipelineBarrier(
        commands_,
        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
        VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, nullptr, 0, nullptr);
    SEQRT_VK_CHECK(fn.vkEndCommandBuffer(commands_),
                   "ending the test command buffer");
    return device_->submit_and_wait(commands_, "running a sequence kernel");
  }

  int dispatches() const { return dispatches_; }

 private:
  TestRecorder(std::shared_ptr<Device> device,
               std::shared_ptr<Pipelines> pipelines)
      : device_(device), pipelines_(pipelines), allocator_(device, 1 << 24) {}

  static std::pair<VkBuffer, VkDeviceSize> key(const BufferSlice& s) {
    return {s.buffer, s.offset};
  }
  void* mapped(const BufferSlice& slice) {
    return buffers_.at(key(slice))->mapped();
  }
  // Every earlier compute or transfer write is visible to what follows,
  // and every earlier access is done before it writes.
  void barrier(VkPipelineStageFlags next) {
    VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    b.dstAccessMask =
        next == VK_PIPELINE_STAGE_TRANSFER_BIT
            ? VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT
            : VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    device_->fn().vkCmdPipelineBarrier(
        commands_,
        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
        next, 0, 1, &b, 0, nullptr, 0, nullptr);
  }

  std::shared_ptr<Device> device_;
  std::shared_ptr<Pipelines> pipelines_;
  Allocator allocator_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;
  VkDescriptorPool descriptors_ = VK_NULL_HANDLE;
  std::map<std::pair<VkBuffer, VkDeviceSize>, std::unique_ptr<Allocation>>
      buffers_;
  int dispatches_ = 0;
};

}  // namespace seqrt::vulkan::sequence_testing
