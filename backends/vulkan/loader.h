// libvulkan loaded at run time (dlopen), so seqrt runs where Vulkan is
// absent. Every entry point the backend uses is fetched into one table
// through vkGetInstanceProcAddr / vkGetDeviceProcAddr.
#pragma once

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan.h>

#include "graph/status.h"

namespace seqrt::vulkan {

// X(name) for each function fetched per instance, Y(name) per device.
#define SEQRT_VK_INSTANCE_FUNCTIONS(X)        \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)

#define SEQRT_VK_DEVICE_FUNCTIONS(X) \
  X(vkDestroyDevice)                 \
  X(vkGetDeviceQueue)                \
  X(vkDeviceWaitIdle)                \
  X(vkQueueSubmit)                   \
  X(vkAllocateMemory)                \
  X(vkFreeMemory)                    \
  X(vkMapMemory)                     \
  X(vkUnmapMemory)                   \
  X(vkCreateBuffer)                  \
  X(vkDestroyBuffer)                 \
  X(vkGetBufferMemoryRequirements)   \
  X(vkBindBufferMemory)              \
  X(vkCreateShaderModule)            \
  X(vkDestroyShaderModule)           \
  X(vkCreatePipelineCache)           \
  X(vkDestroyPipelineCache)          \
  X(vkGetPipelineCacheData)          \
  X(vkCreateComputePipelines)        \
  X(vkDestroyPipeline)               \
  X(vkCreatePipelineLayout)          \
  X(vkDestroyPipelineLayout)         \
  X(vkCreateDescriptorSetLayout)     \
  X(vkDestroyDescriptorSetLayout)    \
  X(vkCreateDescriptorPool)          \
  X(vkDestroyDescriptorPool)         \
  X(vkAllocateDescriptorSets)        \
  X(vkUpdateDescriptorSets)          \
  X(vkCreateCommandPool)             \
  X(vkDestroyCommandPool)            \
  X(vkAllocateCommandBuffers)        \
  X(vkFreeCommandBuffers)            \
  X(vkBeginCommandBuffer)            \
  X(vkEndCommandBuffer)              \
  X(vkCmdBindPipeline)               \
  X(vkCmdBindDescriptorSets)         \
  X(vkCmdPushConstants)              \
  X(vkCmdDispatch)                   \
  X(vkCmdPipelineBarrier)            \
  X(vkCmdCopyBuffer)                 \
  X(vkCmdFillBuffer)                 \
  X(vkCreateFence)                   \
  X(vkDestroyFence)                  \
  X(vkResetFences)                   \
  X(vkWaitForFences)

struct Functions {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  PFN_vkCreateInstance vkCreateInstance = nullptr;
  PFN_vkEnumerateInstanceLayerProperties vkEnumerateInstanceLayerProperties =
      nullptr;
  PFN_vkCreateDebugUtilsMessengerEXT vkCreateDebugUtilsMessengerEXT = nullptr;
  PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT = nullptr;
#define SEQRT_VK_DECLARE(name) PFN_##name name = nullptr;
  SEQRT_VK_INSTANCE_FUNCTIONS(SEQRT_VK_DECLARE)
  SEQRT_VK_DEVICE_FUNCTIONS(SEQRT_VK_DECLARE)
#undef SEQRT_VK_DECLARE
};

// The library handle and the global entry points; kUnsupported naming the
// library when it cannot be loaded. The library stays loaded for the life
// of the process (unloading it under live objects is never safe).
Result<Functions> load_vulkan_library();

// Fills the instance- and device-level entry points; kInternal naming the
// first one missing.
Status load_instance_functions(VkInstance instance, Functions& fns);
Status load_device_functions(VkDevice device, Functions& fns);

// "VK_ERROR_OUT_OF_DEVICE_MEMORY"
const char* vk_result_name(VkResult result);

// An error for a failed call: out of memory for the OOM codes, kInternal
// ("device lost") otherwise, naming what was being done.
Status vk_error(VkResult result, const char* doing);

}  // namespace seqrt::vulkan

// Returns from the enclosing function when a Vulkan call fails.
#define SEQRT_VK_CHECK(call, doing)                              \
  do {                                                           \
    VkResult seqrt_vk_result_ = (call);                          \
    if (seqrt_vk_result_ != VK_SUCCESS) {                        \
      return ::seqrt::vulkan::vk_error(seqrt_vk_result_, doing); \
    }                                                            \
  } while (0)
