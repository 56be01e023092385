// One Vulkan device opened for compute: the instance (with the validation
// layers when asked), the chosen physical device, a compute queue, the
// limits kernels plan against, and the validation-message count.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/vulkan/kernel.h"
#include "backends/vulkan/loader.h"
#include "backends/vulkan/vulkan_options.h"

namespace seqrt::vulkan {

enum class Fault { kNone, kOutOfMemory, kDeviceLost };

class Device {
 public:
  static Result<std::shared_ptr<Device>> open(const VulkanOptions& options);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const Functions& fn() const { return fns_; }
  VkDevice handle() const { return device_; }
  VkPhysicalDevice physical() const { return physical_; }
  uint32_t queue_family() const { return queue_family_; }
  const DeviceLimits& limits() const { return limits_; }
  // Whether compiled graphs store their weights as fp16 (VulkanOptions).
  bool fp16_weights() const { return fp16_weights_; }
  const DeviceInfo& info() const { return info_; }
  const VkPhysicalDeviceMemoryProperties& memory_properties() const {
    return memory_properties_;
  }
  const uint8_t* uuid() const { return uuid_; }

  // Submits one command buffer and waits for it; the queue is locked for
  // the duration (runs from several threads share it).
  Status submit_and_wait(VkCommandBuffer commands, const char* doing);
  // Several command buffers in one submission, in order (a buffer may
  // appear more than once when recorded for simultaneous use).
  Status submit_and_wait(const std::vector<VkCommandBuffer>& commands,
                         const char* doing);

  // Validation messages (warnings and errors) seen so far, and the text
  // of the first few.
  int64_t validation_messages() const { return message_count_.load(); }
  std::vector<std::string> validation_log() const;

  // Fault injection: the next matching operation fails once.
  void inject_fault(Fault fault) { fault_.store(fault); }
  bool take_fault(Fault fault);

 private:
  Device() = default;
  Status create_instance(bool validation);
  Status choose_physical(const VulkanOptions& options);
  Status create_device();
  void read_limits(const VulkanOptions& options);
  static VKAPI_ATTR VkBool32 VKAPI_CALL
  on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
             VkDebugUtilsMessageTypeFlagsEXT types,
             const VkDebugUtilsMessengerCallbackDataEXT* data, void* user);

  Functions fns_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  uint8_t uuid_[VK_UUID_SIZE] = {};
  VkPhysicalDeviceMemoryProperties memory_properties_{};
  DeviceLimits limits_;
  DeviceInfo info_;
  bool fp16_weights_ = false;
  std::mutex queue_mutex_;
  std::atomic<int64_t> message_count_{0};
  mutable std::mutex log_mutex_;
  std::vector<std::string> log_;
  std::atomic<Fault> fault_{Fault::kNone};
};

}  // namespace seqrt::vulkan
