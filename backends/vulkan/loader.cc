#include "backends/vulkan/loader.h"

#include <dlfcn.h>

namespace seqrt::vulkan {

Result<Functions> load_vulkan_library() {
  // Loaded once; a second backend reuses the handle.
  static void* handle = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return no_device(
        "vulkan: cannot load libvulkan.so.1 (is the Vulkan loader "
        "installed? Debian: libvulkan1): {}",
        dlerror() != nullptr ? dlerror() : "not found");
  }
  Functions fns;
  fns.vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(
      dlsym(handle, "vkGetInstanceProcAddr"));
  if (fns.vkGetInstanceProcAddr == nullptr) {
    return unsupported("vulkan: libvulkan.so.1 has no vkGetInstanceProcAddr");
  }
  fns.vkCreateInstance = reinterpret_cast<PFN_vkCreateInstance>(
      fns.vkGetInstanceProcAddr(nullptr, "vkCreateInstance"));
  fns.vkEnumerateInstanceLayerProperties =
      reinterpret_cast<PFN_vkEnumerateInstanceLayerProperties>(
          fns.vkGetInstanceProcAddr(nullptr,
                                    "vkEnumerateInstanceLayerProperties"));
  if (fns.vkCreateInstance == nullptr ||
      fns.vkEnumerateInstanceLayerProperties == nullptr) {
    return unsupported("vulkan: the loader lacks vkCreateInstance");
  }
  return fns;
}

Status load_instance_functions(VkInstance instance, Functions& fns) {
#define SEQRT_VK_LOAD(name)                                        \
  fns.name = reinterpret_cast<PFN_##name>(                         \
      fns.vkGetInstanceProcAddr(instance, #name));                 \
  if (fns.name == nullptr) {                                       \
    return internal_error("vulkan: the instance lacks {}", #name); \
  }
  SEQRT_VK_INSTANCE_FUNCTIONS(SEQRT_VK_LOAD)
#undef SEQRT_VK_LOAD
  // Present only with VK_EXT_debug_utils (validation runs).
  fns.vkCreateDebugUtilsMessengerEXT =
      reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
          fns.vkGetInstanceProcAddr(instance,
                                    "vkCreateDebugUtilsMessengerEXT"));
  fns.vkDestroyDebugUtilsMessengerEXT =
      reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
          fns.vkGetInstanceProcAddr(instance,
                                    "vkDestroyDebugUtilsMessengerEXT"));
  return Status::ok();
}

Status load_device_functions(VkDevice device, Functions& fns) {
#define SEQRT_VK_LOAD(name)                                                 \
  fns.name =                                                                \
      reinterpret_cast<PFN_##name>(fns.vkGetDeviceProcAddr(device, #name)); \
  if (fns.name == nullptr) {                                                \
    return internal_error("vulkan: the device lacks {}", #name);            \
  }
  SEQRT_VK_DEVICE_FUNCTIONS(SEQRT_VK_LOAD)
#undef SEQRT_VK_LOAD
  return Status::ok();
}

const char* vk_result_name(VkResult result) {
  switch (result) {
    case VK_SUCCESS:
      return "VK_SUCCESS";
    case VK_NOT_READY:
      return "VK_NOT_READY";
    case VK_TIMEOUT:
      return "VK_TIMEOUT";
    case VK_ERROR_OUT_OF_HOST_MEMORY:
      return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
      return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED:
      return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST:
      return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED:
      return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT:
      return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT:
      return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT:
      return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER:
      return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS:
      return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_FRAGMENTED_POOL:
      return "VK_ERROR_FRAGMENTED_POOL";
    case VK_ERROR_OUT_OF_POOL_MEMORY:
      return "VK_ERROR_OUT_OF_POOL_MEMORY";
    default:
      return "VkResult (unknown code)";
  }
}

Status vk_error(VkResult result, const char* doing) {
  if (result == VK_ERROR_OUT_OF_DEVICE_MEMORY ||
      result == VK_ERROR_OUT_OF_HOST_MEMORY) {
    return make_error(StatusCode::kOutOfMemory, "vulkan: out of memory {}: {}",
                      doing, vk_result_name(result));
  }
  if (result == VK_ERROR_DEVICE_LOST) {
    return internal_error("vulkan: device lost {}: {}", doing,
                          vk_result_name(result));
  }
  return internal_error("vulkan: failed {}: {} ({})", doing,
                        vk_result_name(result), static_cast<int>(result));
}

}  // namespace seqrt::vulkan
