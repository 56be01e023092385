#include "backends/vulkan/pipelines.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <unistd.h>

#include <fmt/format.h>

#include "backends/vulkan/shaders.h"

namespace seqrt::vulkan {
namespace {

// The header every pipeline cache starts with (Vulkan spec: version one).
struct CacheHeader {
  uint32_t length;
  uint32_t version;
  uint32_t vendor;
  uint32_t device;
  uint8_t uuid[VK_UUID_SIZE];
};

std::vector<char> read_cache_file(const std::string& path,
                                  const uint8_t* uuid) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::vector<char> data((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  // Handing a driver a cache made by another device or a truncated file is
  // legal but some drivers misbehave; check the header ourselves.
  CacheHeader header;
  if (data.size() < sizeof(header)) return {};
  std::memcpy(&header, data.data(), sizeof(header));
  if (header.length < sizeof(header) ||
      header.version != VK_PIPELINE_CACHE_HEADER_VERSION_ONE ||
      std::memcmp(header.uuid, uuid, VK_UUID_SIZE) != 0) {
    return {};
  }
  return data;
}

}  // namespace

std::string pipeline_cache_path(const uint8_t* uuid) {
  if (const char* forced = std::getenv("SEQRT_VULKAN_PIPELINE_CACHE")) {
    return forced;
  }
  std::string dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    dir = xdg;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    dir = std::string(home) + "/.cache";
  } else {
    return "";
  }
  std::string hex;
  for (uint32_t i = 0; i < VK_UUID_SIZE; ++i)
    hex += fmt::format("{:02x}", uuid[i]);
  return fmt::format("{}/seqrt/vulkan-pipelines-{}.bin", dir, hex);
}

Pipelines::Pipelines(std::shared_ptr<Device> device)
    : device_(std::move(device)) {
  cache_path_ = pipeline_cache_path(device_->uuid());
  std::vector<char> data;
  if (!cache_path_.empty())
    data = read_cache_file(cache_path_, device_->uuid());
  VkPipelineCacheCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  info.initialDataSize = data.size();
  info.pInitialData = data.empty() ? nullptr : data.data();
  const Functions& fn = device_->fn();
  if (fn.vkCreatePipelineCache(device_->handle(), &info, nullptr, &cache_) ==
      VK_SUCCESS) {
    loaded_from_disk_ = !data.empty();
    return;
  }
  // The driver refused the data: start empty.
  info.initialDataSize = 0;
  info.pInitialData = nullptr;
  if (fn.vkCreatePipelineCache(device_->handle(), &info, nullptr, &cache_) !=
      VK_SUCCESS) {
    cache_ = VK_NULL_HANDLE;  // pipelines are then built uncached
  }
}

Pipelines::~Pipelines() {
  (void)save();  // a cache that cannot be written only costs time later
  const Functions& fn = device_->fn();
  VkDevice dev = device_->handle();
  for (auto& [key, pipeline] : pipelines_) {
    fn.vkDestroyPipeline(dev, pipeline, nullptr);
  }
  for (auto& [count, layout] : layouts_) {
    fn.vkDestroyPipelineLayout(dev, layout.layout, nullptr);
    fn.vkDestroyDescriptorSetLayout(dev, layout.set_layout, nullptr);
  }
  if (cache_ != VK_NULL_HANDLE) fn.vkDestroyPipelineCache(dev, cache_, nullptr);
}

Status Pipelines::save() const {
  if (cache_path_.empty() || cache_ == VK_NULL_HANDLE) return Status::ok();
  std::lock_guard<std::mutex> lock(mutex_);
  const Functions& fn = device_->fn();
  size_t size = 0;
  SEQRT_VK_CHECK(
      fn.vkGetPipelineCacheData(device_->handle(), cache_, &size, nullptr),
      "reading the pipeline cache");
  std::vector<char> data(size);
  SEQRT_VK_CHECK(
      fn.vkGetPipelineCacheData(device_->handle(), cache_, &size, data.data()),
      "reading the pipeline cache");
  std::error_code error;
  std::filesystem::path path(cache_path_);
  if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path(), error);
  }
  // Written aside then renamed, so a reader never sees half a file.
  // Unique per process and per Pipelines object (threads save too).
  std::string temp = cache_path_ + fmt::format(".{}.{}.tmp", ::getpid(),
                                               static_cast<const void*>(this));
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out.write(data.data(), static_cast<std::streamsize>(size))) {
      return io_error("vulkan: cannot write the pipeline cache '{}'", temp);
    }
  }
  std::filesystem::rename(temp, cache_path_, error);
  if (error) {
    std::filesystem::remove(temp, error);
    return io_error("vulkan: cannot write the pipeline cache '{}'",
                    cache_path_);
  }
  return Status::ok();
}

int Pipelines::pipelines_built() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(pipelines_.size());
}

Result<VkDescriptorSetLayout> Pipelines::set_layout(uint32_t bindings) {
  auto found = layouts_.find(bindings);
  if (found != layouts_.end()) return found->second.set_layout;
  const Functions& fn = device_->fn();
  VkDevice dev = device_->handle();
  std::vector<VkDescriptorSetLayoutBinding> slots(bindings);
  for (uint32_t i = 0; i < bindings; ++i) {
    slots[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  }
  Pipeline layout;
  VkDescriptorSetLayoutCreateInfo set_info{
      VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set_info.bindingCount = bindings;
  set_info.pBindings = slots.data();
  SEQRT_VK_CHECK(fn.vkCreateDescriptorSetLayout(dev, &set_info, nullptr,
                                                &layout.set_layout),
                 "creating a descriptor set layout");
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushConstantBytes};
  VkPipelineLayoutCreateInfo info{
      VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  info.setLayoutCount = 1;
  info.pSetLayouts = &layout.set_layout;
  info.pushConstantRangeCount = 1;
  info.pPushConstantRanges = &push;
  VkResult result =
      fn.vkCreatePipelineLayout(dev, &info, nullptr, &layout.layout);
  if (result != VK_SUCCESS) {
    fn.vkDestroyDescriptorSetLayout(dev, layout.set_layout, nullptr);
    return vk_error(result, "creating a pipeline layout");
  }
  layouts_[bindings] = layout;
  return layout.set_layout;
}

Result<Pipeline> Pipelines::get(const std::string& shader,
                                const std::vector<uint32_t>& specialization,
                                uint32_t bindings) {
  const EmbeddedShader* code = find_shader(shader);
  if (code == nullptr) {
    return not_found("vulkan: no embedded shader '{}'", shader);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  SEQRT_ASSIGN_OR_RETURN(VkDescriptorSetLayout set, set_layout(bindings));
  Pipeline result = layouts_[bindings];
  result.set_layout = set;
  auto key = std::make_tuple(shader, specialization, bindings);
  auto found = pipelines_.find(key);
  if (found != pipelines_.end()) {
    result.pipeline = found->second;
    return result;
  }
  const Functions& fn = device_->fn();
  VkDevice dev = device_->handle();
  VkShaderModuleCreateInfo module_info{
      VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  module_info.codeSize = code->word_count * sizeof(uint32_t);
  module_info.pCode = code->words;
  VkShaderModule module = VK_NULL_HANDLE;
  SEQRT_VK_CHECK(fn.vkCreateShaderModule(dev, &module_info, nullptr, &module),
                 "creating a shader module");
  std::vector<VkSpecializationMapEntry> entries(specialization.size());
  for (size_t i = 0; i < specialization.size(); ++i) {
    entries[i] = {static_cast<uint32_t>(i),
                  static_cast<uint32_t>(i * sizeof(uint32_t)),
                  sizeof(uint32_t)};
  }
  VkSpecializationInfo spec{
      static_cast<uint32_t>(entries.size()), entries.data(),
      specialization.size() * sizeof(uint32_t), specialization.data()};
  VkComputePipelineCreateInfo info{
      VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module;
  info.stage.pName = "main";
  info.stage.pSpecializationInfo = specialization.empty() ? nullptr : &spec;
  info.layout = result.layout;
  VkResult made = fn.vkCreateComputePipelines(dev, cache_, 1, &info, nullptr,
                                              &result.pipeline);
  fn.vkDestroyShaderModule(dev, module, nullptr);
  if (made != VK_SUCCESS) {
    std::string doing = "building the pipeline for shader '" + shader + "'";
    return vk_error(made, doing.c_str());
  }
  pipelines_[key] = result.pipeline;
  return result;
}

}  // namespace seqrt::vulkan
