#include "backends/vulkan/recorder.h"

#include <algorithm>

namespace seqrt::vulkan {
namespace {

bool overlap(const BufferSlice& a, const BufferSlice& b) {
  return a.buffer == b.buffer &&
         a.offset < b.offset + std::max<VkDeviceSize>(b.bytes, 1) &&
         b.offset < a.offset + std::max<VkDeviceSize>(a.bytes, 1);
}

bool overlaps_any(const BufferSlice& slice,
                  const std::vector<BufferSlice>& set) {
  for (const BufferSlice& other : set) {
    if (overlap(slice, other)) return true;
  }
  return false;
}

// Shaders read whole 32-bit words: a range is bound rounded up to 4 bytes
// (allocations are 64-byte multiples, so this stays inside them).
VkDeviceSize bound_range(const BufferSlice& slice) {
  return std::max<VkDeviceSize>((slice.bytes + 3) / 4 * 4, 4);
}

}  // namespace

Program::~Program() {
  const Functions& fn = device_->fn();
  VkDevice dev = device_->handle();
  if (pool_ != VK_NULL_HANDLE) fn.vkDestroyCommandPool(dev, pool_, nullptr);
  if (descriptors_ != VK_NULL_HANDLE) {
    fn.vkDestroyDescriptorPool(dev, descriptors_, nullptr);
  }
}

Status Program::run(const char* doing) const {
  return device_->submit_and_wait(commands_, doing);
}

CommandRecorder::CommandRecorder(std::shared_ptr<Device> device,
                                 Pipelines& pipelines, Allocator& allocator)
    : device_(device),
      pipelines_(pipelines),
      allocator_(allocator),
      program_(std::make_unique<Program>(device)) {}

void CommandRecorder::order(const std::vector<BufferSlice>& reads,
                            const std::vector<BufferSlice>& writes) {
  bool hazard = false;
  for (const BufferSlice& slice : reads) {
    hazard = hazard || overlaps_any(slice, written_);
  }
  for (const BufferSlice& slice : writes) {
    hazard =
        hazard || overlaps_any(slice, written_) || overlaps_any(slice, read_);
  }
  if (hazard) {
    steps_.push_back(Step{Kind::kBarrier});
    written_.clear();
    read_.clear();
  }
  read_.insert(read_.end(), reads.begin(), reads.end());
  written_.insert(written_.end(), writes.begin(), writes.end());
}

void CommandRecorder::barrier() {
  steps_.push_back(Step{Kind::kBarrier});
  written_.clear();
  read_.clear();
}

Status CommandRecorder::dispatch(const Dispatch& dispatch) {
  const DeviceLimits& lim = limits();
  if (dispatch.push_constants.size() > kPushConstantBytes ||
      dispatch.push_constants.size() % 4 != 0) {
    return invalid_argument(
        "vulkan: shader '{}': {} push-constant bytes (at most {}, a multiple "
        "of 4)",
        dispatch.shader, dispatch.push_constants.size(), kPushConstantBytes);
  }
  std::vector<BufferSlice> bindings = dispatch.reads;
  bindings.insert(bindings.end(), dispatch.writes.begin(),
                  dispatch.writes.end());
  for (size_t i = 0; i < bindings.size(); ++i) {
    if (bindings[i].empty()) {
      return invalid_argument("vulkan: shader '{}': binding {} has no buffer",
                              dispatch.shader, i);
    }
    if (bound_range(bindings[i]) > lim.max_storage_buffer_range) {
      return make_error(StatusCode::kLimitExceeded,
                        "vulkan: shader '{}': binding {} spans {} bytes, over "
                        "the device's maxStorageBufferRange of {} bytes",
                        dispatch.shader, i, bindings[i].bytes,
                        lim.max_storage_buffer_range);
    }
    if (lim.storage_buffer_offset_alignment != 0 &&
        bindings[i].offset % lim.storage_buffer_offset_alignment != 0) {
      return internal_error(
          "vulkan: shader '{}': binding {} at offset {} is not aligned to {}",
          dispatch.shader, i, bindings[i].offset,
          lim.storage_buffer_offset_alignment);
    }
  }
  for (int d = 0; d < 3; ++d) {
    if (dispatch.groups[d] > lim.max_group_count[d]) {
      return make_error(StatusCode::kLimitExceeded,
                        "vulkan: shader '{}': {} workgroups in dimension {}, "
                        "over the device limit {}",
                        dispatch.shader, dispatch.groups[d], d,
                        lim.max_group_count[d]);
    }
  }
  SEQRT_ASSIGN_OR_RETURN(
      Pipeline pipeline,
      pipelines_.get(dispatch.shader, dispatch.specialization,
                     static_cast<uint32_t>(bindings.size())));
  if (dispatch.groups[0] == 0 || dispatch.groups[1] == 0 ||
      dispatch.groups[2] == 0) {
    return Status::ok();  // nothing to do (an empty tensor)
  }
  order(dispatch.reads, dispatch.writes);
  Step step{Kind::kDispatch};
  step.pipeline = pipeline;
  step.push = dispatch.push_constants;
  step.bindings = std::move(bindings);
  step.groups = dispatch.groups;
  steps_.push_back(std::move(step));
  return Status::ok();
}

Result<BufferSlice> CommandRecorder::scratch(VkDeviceSize bytes) {
  SEQRT_ASSIGN_OR_RETURN(
      std::unique_ptr<Allocation> allocation,
      allocator_.allocate(bytes, MemoryPlace::kDevice,
                          "allocating kernel scratch memory"));
  BufferSlice slice = allocation->slice();
  slice.bytes = bytes;
  program_->scratch_.push_back(std::move(allocation));
  return slice;
}

Status CommandRecorder::copy(const BufferSlice& src, const BufferSlice& dst) {
  if (src.bytes != dst.bytes) {
    return internal_error("vulkan: copy of {} bytes into {} bytes", src.bytes,
                          dst.bytes);
  }
  if (src.bytes == 0 ||
      (src.buffer == dst.buffer && src.offset == dst.offset)) {
    return Status::ok();
  }
  if (overlap(src, dst)) {
    return internal_error("vulkan: copy between overlapping ranges");
  }
  order({src}, {dst});
  Step step{Kind::kCopy};
  step.src = src;
  step.dst = dst;
  steps_.push_back(std::move(step));
  return Status::ok();
}

Status CommandRecorder::fill(const BufferSlice& dst, uint32_t word) {
  if (dst.bytes == 0) return Status::ok();
  order({}, {dst});
  Step step{Kind::kFill};
  step.dst = dst;
  step.word = word;
  steps_.push_back(std::move(step));
  return Status::ok();
}

Result<BufferSlice> CommandRecorder::error_word(const std::string& problem) {
  SEQRT_ASSIGN_OR_RETURN(BufferSlice word, scratch(4));
  if (zero_error_words_) {
    SEQRT_RETURN_IF_ERROR(fill(word, 0));  // before the node's dispatches
  }
  error_words_.push_back({word, problem});
  return word;
}

int CommandRecorder::barrier_count() const {
  return static_cast<int>(std::count_if(
      steps_.begin(), steps_.end(),
      [](const Step& step) { return step.kind == Kind::kBarrier; }));
}

Result<std::unique_ptr<Program>> CommandRecorder::finish() {
  const Functions& fn = device_->fn();
  VkDevice dev = device_->handle();
  Program& program = *program_;
  uint32_t sets = 0, descriptors = 0;
  for (const Step& step : steps_) {
    if (step.kind != Kind::kDispatch) continue;
    ++sets;
    descriptors += static_cast<uint32_t>(step.bindings.size());
  }
  if (sets > 0) {
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                              std::max<uint32_t>(descriptors, 1)};
    VkDescriptorPoolCreateInfo info{
        VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    info.maxSets = sets;
    info.poolSizeCount = 1;
    info.pPoolSizes = &size;
    SEQRT_VK_CHECK(
        fn.vkCreateDescriptorPool(dev, &info, nullptr, &program.descriptors_),
        "creating a descriptor pool");
  }
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.queueFamilyIndex = device_->queue_family();
  SEQRT_VK_CHECK(
      fn.vkCreateCommandPool(dev, &pool_info, nullptr, &program.pool_),
      "creating a command pool");
  VkCommandBufferAllocateInfo alloc{
      VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = program.pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  SEQRT_VK_CHECK(fn.vkAllocateCommandBuffers(dev, &alloc, &program.commands_),
                 "allocating a command buffer");
  VkCommandBuffer cmd = program.commands_;
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
  SEQRT_VK_CHECK(fn.vkBeginCommandBuffer(cmd, &begin), "recording commands");

  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask =
      VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
      VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT;
  barrier.dstAccessMask =
      VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
      VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  const VkPipelineStageFlags work =
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Kind::kBarrier:
        fn.vkCmdPipelineBarrier(cmd, work, work, 0, 1, &barrier, 0, nullptr, 0,
                                nullptr);
        ++program.barriers_;
        break;
      case Kind::kCopy: {
        VkBufferCopy region{step.src.offset, step.dst.offset, step.src.bytes};
        fn.vkCmdCopyBuffer(cmd, step.src.buffer, step.dst.buffer, 1, &region);
        break;
      }
      case Kind::kFill:
        fn.vkCmdFillBuffer(cmd, step.dst.buffer, step.dst.offset,
                           bound_range(step.dst), step.word);
        break;
      case Kind::kDispatch: {
        VkDescriptorSetAllocateInfo set_info{
            VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
        set_info.descriptorPool = program.descriptors_;
        set_info.descriptorSetCount = 1;
        set_info.pSetLayouts = &step.pipeline.set_layout;
        VkDescriptorSet set = VK_NULL_HANDLE;
        SEQRT_VK_CHECK(fn.vkAllocateDescriptorSets(dev, &set_info, &set),
                       "allocating a descriptor set");
        std::vector<VkDescriptorBufferInfo> infos(step.bindings.size());
        std::vector<VkWriteDescriptorSet> writes(step.bindings.size());
        for (size_t i = 0; i < step.bindings.size(); ++i) {
          infos[i] = {step.bindings[i].buffer, step.bindings[i].offset,
                      bound_range(step.bindings[i])};
          writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
          writes[i].dstSet = set;
          writes[i].dstBinding = static_cast<uint32_t>(i);
          writes[i].descriptorCount = 1;
          writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
          writes[i].pBufferInfo = &infos[i];
        }
        fn.vkUpdateDescriptorSets(dev, static_cast<uint32_t>(writes.size()),
                                  writes.data(), 0, nullptr);
        fn.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE,
                             step.pipeline.pipeline);
        fn.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE,
                                   step.pipeline.layout, 0, 1, &set, 0,
                                   nullptr);
        // The whole range is always pushed (zero-padded), so a shader
        // never reads undefined push-constant bytes.
        std::vector<uint8_t> push(kPushConstantBytes, 0);
        std::copy(step.push.begin(), step.push.end(), push.begin());
        fn.vkCmdPushConstants(cmd, step.pipeline.layout,
                              VK_SHADER_STAGE_COMPUTE_BIT, 0,
                              kPushConstantBytes, push.data());
        fn.vkCmdDispatch(cmd, step.groups[0], step.groups[1], step.groups[2]);
        ++program.dispatches_;
        break;
      }
    }
  }
  // Downloads are read by the host after the fence.
  VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  to_host.srcAccessMask =
      VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  fn.vkCmdPipelineBarrier(cmd, work, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host,
                          0, nullptr, 0, nullptr);
  SEQRT_VK_CHECK(fn.vkEndCommandBuffer(cmd), "recording commands");
  steps_.clear();
  return std::move(program_);
}

}  // namespace seqrt::vulkan
