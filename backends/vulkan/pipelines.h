// Compute pipelines built from the embedded SPIR-V, one per (shader,
// specialisation constants, binding count), kept for the device's life.
// Pipelines go through a VkPipelineCache that is loaded from and saved to
// disk: $SEQRT_VULKAN_PIPELINE_CACHE, else
// $XDG_CACHE_HOME/seqrt/vulkan-pipelines-<uuid>.bin (or ~/.cache/...). A
// corrupt or foreign file is ignored.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "backends/vulkan/device.h"

namespace seqrt::vulkan {

// Every pipeline layout has this push-constant range (contract).
inline constexpr uint32_t kPushConstantBytes = 128;

struct Pipeline {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
};

class Pipelines {
 public:
  explicit Pipelines(std::shared_ptr<Device> device);
  ~Pipelines();  // saves the cache file

  Result<Pipeline> get(const std::string& shader,
                       const std::vector<uint32_t>& specialization,
                       uint32_t bindings);

  // The cache file in use ("" when no home or cache dir is known).
  const std::string& cache_path() const { return cache_path_; }
  // Writes the pipeline cache to cache_path(); kIoError on failure.
  Status save() const;
  bool loaded_from_disk() const { return loaded_from_disk_; }
  int pipelines_built() const;

 private:
  Result<VkDescriptorSetLayout> set_layout(uint32_t bindings);

  std::shared_ptr<Device> device_;
  std::string cache_path_;
  bool loaded_from_disk_ = false;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  mutable std::mutex mutex_;
  std::map<uint32_t, Pipeline> layouts_;  // by binding count
  std::map<std::tuple<std::string, std::vector<uint32_t>, uint32_t>, VkPipeline>
      pipelines_;
};

// The cache file name for a device UUID, following the rules above.
std::string pipeline_cache_path(const uint8_t* uuid);

}  // namespace seqrt::vulkan
