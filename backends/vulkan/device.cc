#include "backends/vulkan/device.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "backends/vulkan/driver_pin.h"

namespace seqrt::vulkan {
namespace {

const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

// Higher is better: discrete > integrated > virtual > CPU > other.
int type_rank(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return 4;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return 3;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return 1;
    default:
      return 0;
  }
}

// The device's limit, or `forced` when that is lower (0: not forced).
template <typename T>
T lowered(T device_limit, T forced) {
  return forced != 0 && forced < device_limit ? forced : device_limit;
}

bool is_all_digits(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// SEQRT_VULKAN_MAX_GROUPS="x,y,z" (zeros where unset or malformed).
std::array<uint32_t, 3> groups_from_env() {
  std::array<uint32_t, 3> groups{};
  std::string text = env_or_empty("SEQRT_VULKAN_MAX_GROUPS");
  for (size_t axis = 0; axis < 3 && !text.empty(); ++axis) {
    size_t comma = text.find(',');
    std::string part = text.substr(0, comma);
    if (is_all_digits(part)) {
      groups[axis] =
          static_cast<uint32_t>(std::strtoul(part.c_str(), nullptr, 10));
    }
    text = comma == std::string::npos ? "" : text.substr(comma + 1);
  }
  return groups;
}

// Instances and devices are created and destroyed one at a time in the
// process: Sessions on other threads do so at any moment, and the loader,
// the layers and some drivers (lavapipe) load, set up and unload shared
// state there without guarding it. Recursive: a failed open() destroys its
// half-made Device while holding it.
// Never destroyed, so a Device released during static destruction finds it.
std::recursive_mutex& lifetime_mutex() {
  static auto* mutex = new std::recursive_mutex();
  return *mutex;
}

}  // namespace

Result<std::shared_ptr<Device>> Device::open(const VulkanOptions& options) {
  std::lock_guard<std::recursive_mutex> lock(lifetime_mutex());
  std::shared_ptr<Device> device(new Device());
  const std::set<std::string> libraries = loaded_libraries();
  SEQRT_ASSIGN_OR_RETURN(device->fns_, load_vulkan_library());
  bool validation =
      options.validation || env_or_empty("SEQRT_VULKAN_VALIDATION") == "1";
  Status instance = device->create_instance(validation);
  // Pinned even when opening fails later (no such device): the loader has
  // loaded the driver and layers by now (driver_pin.h).
  keep_loaded_since(libraries);
  SEQRT_RETURN_IF_ERROR(instance);
  SEQRT_RETURN_IF_ERROR(device->choose_physical(options));
  SEQRT_RETURN_IF_ERROR(device->create_device());
  device->read_limits(options);
  const std::string forms = env_or_empty("SEQRT_VULKAN_FORMS");
  if (!forms.empty() && forms != "auto" && forms != "recurrent" &&
      forms != "chunked") {
    return invalid_argument(
        "vulkan: SEQRT_VULKAN_FORMS must be auto, recurrent or chunked, got "
        "'{}'",
        forms);
  }
  device->fp16_weights_ =
      options.fp16_weights || env_or_empty("SEQRT_VULKAN_FP16_WEIGHTS") == "1";
  if (device->fp16_weights_ && !device->limits_.fp16_storage) {
    return unsupported(
        "vulkan: fp16 weights were asked for (backend option fp16_weights "
        "or SEQRT_VULKAN_FP16_WEIGHTS), but device '{}' has no 16-bit "
        "storage (storageBuffer16BitAccess); unset it to run with fp32 "
        "weights",
        device->info_.name);
  }
  std::string fault = options.inject_fault.empty()
                          ? env_or_empty("SEQRT_VULKAN_INJECT_FAULT")
                          : options.inject_fault;
  if (fault == "oom") {
    device->inject_fault(Fault::kOutOfMemory);
  } else if (fault == "device_lost") {
    device->inject_fault(Fault::kDeviceLost);
  } else if (!fault.empty()) {
    return invalid_argument(
        "vulkan: SEQRT_VULKAN_INJECT_FAULT is '{}'; expected oom or "
        "device_lost",
        fault);
  }
  return device;
}

Device::~Device() {
  std::lock_guard<std::recursive_mutex> lock(lifetime_mutex());
  if (device_ != VK_NULL_HANDLE) {
    fns_.vkDeviceWaitIdle(device_);
    if (fence_ != VK_NULL_HANDLE) fns_.vkDestroyFence(device_, fence_, nullptr);
    fns_.vkDestroyDevice(device_, nullptr);
  }
  if (messenger_ != VK_NULL_HANDLE) {
    fns_.vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
  }
  if (instance_ != VK_NULL_HANDLE) fns_.vkDestroyInstance(instance_, nullptr);
}

Status Device::create_instance(bool validation) {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "seqrt";
  app.pEngineName = "seqrt";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  std::vector<const char*> layers, extensions;
  VkValidationFeatureEnableEXT enables[] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  VkDebugUtilsMessengerCreateInfoEXT messenger_info{
      VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger_info.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger_info.pfnUserCallback = &Device::on_message;
  messenger_info.pUserData = this;
  if (validation) {
    uint32_t count = 0;
    fns_.vkEnumerateInstanceLayerProperties(&count, nullptr);
    std::vector<VkLayerProperties> available(count);
    fns_.vkEnumerateInstanceLayerProperties(&count, available.data());
    bool found = false;
    for (const VkLayerProperties& layer : available) {
      found = found || std::strcmp(layer.layerName, kValidationLayer) == 0;
    }
    if (!found) {
      return unsupported(
          "vulkan: validation asked for (backend option validation or "
          "SEQRT_VULKAN_VALIDATION) but {} is not installed (Debian: "
          "vulkan-validationlayers)",
          kValidationLayer);
    }
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
    features.enabledValidationFeatureCount = 1;
    features.pEnabledValidationFeatures = enables;
    // Messages from instance creation itself are caught too.
    features.pNext = &messenger_info;
    info.pNext = &features;
  }
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  VkResult result = fns_.vkCreateInstance(&info, nullptr, &instance_);
  if (result != VK_SUCCESS) {
    instance_ = VK_NULL_HANDLE;
    // No driver (VK_ERROR_INCOMPATIBLE_DRIVER) means no device here;
    // anything else is a fault of the installed driver or layers.
    StatusCode code = result == VK_ERROR_INCOMPATIBLE_DRIVER
                          ? StatusCode::kNoDevice
                          : StatusCode::kUnsupported;
    return make_error(code, "vulkan: cannot create an instance: {}",
                      vk_result_name(result));
  }
  SEQRT_RETURN_IF_ERROR(load_instance_functions(instance_, fns_));
  if (validation) {
    if (fns_.vkCreateDebugUtilsMessengerEXT == nullptr) {
      return unsupported("vulkan: validation on but VK_EXT_debug_utils lacks");
    }
    SEQRT_VK_CHECK(fns_.vkCreateDebugUtilsMessengerEXT(
                       instance_, &messenger_info, nullptr, &messenger_),
                   "creating the debug messenger");
  }
  return Status::ok();
}

Status Device::choose_physical(const VulkanOptions& options) {
  uint32_t count = 0;
  SEQRT_VK_CHECK(fns_.vkEnumeratePhysicalDevices(instance_, &count, nullptr),
                 "listing devices");
  std::vector<VkPhysicalDevice> devices(count);
  SEQRT_VK_CHECK(
      fns_.vkEnumeratePhysicalDevices(instance_, &count, devices.data()),
      "listing devices");
  int wanted_index = options.device_index;
  std::string wanted_name = options.device_name;
  std::string env = env_or_empty("SEQRT_VULKAN_DEVICE");
  if (wanted_index < 0 && wanted_name.empty() && !env.empty()) {
    if (is_all_digits(env)) {
      wanted_index = std::atoi(env.c_str());
    } else {
      wanted_name = env;
    }
  }
  std::vector<std::string> names;
  int best = -1, best_rank = -1;
  for (uint32_t i = 0; i < count; ++i) {
    VkPhysicalDeviceProperties props;
    fns_.vkGetPhysicalDeviceProperties(devices[i], &props);
    names.push_back(fmt::format("{}: {}", i, props.deviceName));
    uint32_t families = 0;
    fns_.vkGetPhysicalDeviceQueueFamilyProperties(devices[i], &families,
                                                  nullptr);
    std::vector<VkQueueFamilyProperties> family_props(families);
    fns_.vkGetPhysicalDeviceQueueFamilyProperties(devices[i], &families,
                                                  family_props.data());
    int compute_family = -1;
    for (uint32_t f = 0; f < families; ++f) {
      if ((family_props[f].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0) {
        compute_family = static_cast<int>(f);
        break;
      }
    }
    if (compute_family < 0 || props.apiVersion < VK_API_VERSION_1_2) continue;
    bool chosen_by_user =
        (wanted_index >= 0 && static_cast<uint32_t>(wanted_index) == i) ||
        (!wanted_name.empty() &&
         std::string(props.deviceName).find(wanted_name) != std::string::npos);
    int rank = chosen_by_user ? 100 : type_rank(props.deviceType);
    if ((wanted_index >= 0 || !wanted_name.empty()) && !chosen_by_user) {
      continue;
    }
    if (rank > best_rank) {
      best = static_cast<int>(i);
      best_rank = rank;
      queue_family_ = static_cast<uint32_t>(compute_family);
    }
  }
  if (best < 0) {
    if (wanted_index >= 0 || !wanted_name.empty()) {
      return not_found(
          "vulkan: no Vulkan 1.2 compute device matches '{}' (backend option "
          "device or device_name, or SEQRT_VULKAN_DEVICE); devices: {}",
          wanted_index >= 0 ? std::to_string(wanted_index) : wanted_name,
          names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", ")));
    }
    return no_device("vulkan: no Vulkan 1.2 device with a compute queue");
  }
  physical_ = devices[best];
  return Status::ok();
}

Status Device::create_device() {
  VkPhysicalDeviceVulkan12Features have12{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features have11{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  have11.pNext = &have12;
  VkPhysicalDeviceFeatures2 have{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  have.pNext = &have11;
  fns_.vkGetPhysicalDeviceFeatures2(physical_, &have);

  // Only the features kernels may use: 64-bit ints (int64 indices),
  // 8/16-bit storage (bool and fp16 tensors).
  VkPhysicalDeviceVulkan12Features want12{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  want12.storageBuffer8BitAccess = have12.storageBuffer8BitAccess;
  want12.shaderInt8 = have12.shaderInt8;
  VkPhysicalDeviceVulkan11Features want11{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  want11.storageBuffer16BitAccess = have11.storageBuffer16BitAccess;
  want11.pNext = &want12;
  VkPhysicalDeviceFeatures2 want{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  want.features.shaderInt64 = have.features.shaderInt64;
  want.pNext = &want11;
  limits_.fp16_storage = have11.storageBuffer16BitAccess == VK_TRUE;

  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue.queueFamilyIndex = queue_family_;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.pNext = &want;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue;
  SEQRT_VK_CHECK(fns_.vkCreateDevice(physical_, &info, nullptr, &device_),
                 "creating the logical device");
  SEQRT_RETURN_IF_ERROR(load_device_functions(device_, fns_));
  fns_.vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
  VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  SEQRT_VK_CHECK(fns_.vkCreateFence(device_, &fence, nullptr, &fence_),
                 "creating a fence");
  return Status::ok();
}

void Device::read_limits(const VulkanOptions& options) {
  VkPhysicalDeviceSubgroupProperties subgroup{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceVulkan11Properties props11{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
  props11.pNext = &subgroup;
  VkPhysicalDeviceProperties2 props{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &props11;
  fns_.vkGetPhysicalDeviceProperties2(physical_, &props);
  const VkPhysicalDeviceLimits& l = props.properties.limits;
  std::memcpy(uuid_, props.properties.pipelineCacheUUID, VK_UUID_SIZE);
  fns_.vkGetPhysicalDeviceMemoryProperties(physical_, &memory_properties_);

  limits_.shared_memory_bytes = l.maxComputeSharedMemorySize;
  uint32_t forced = options.shared_limit_bytes;
  std::string env_limit = env_or_empty("SEQRT_VULKAN_SHARED_LIMIT");
  if (forced == 0 && is_all_digits(env_limit)) {
    forced =
        static_cast<uint32_t>(std::strtoul(env_limit.c_str(), nullptr, 10));
  }
  if (forced != 0 && forced < limits_.shared_memory_bytes) {
    limits_.shared_memory_bytes = forced;
  }
  limits_.max_invocations = l.maxComputeWorkGroupInvocations;
  const std::array<uint32_t, 3> forced_groups =
      options.max_group_count != std::array<uint32_t, 3>{}
          ? options.max_group_count
          : groups_from_env();
  for (int i = 0; i < 3; ++i) {
    limits_.max_group_count[i] =
        lowered(l.maxComputeWorkGroupCount[i], forced_groups[i]);
  }
  limits_.subgroup_size = subgroup.subgroupSize;
  const VkSubgroupFeatureFlags needed =
      VK_SUBGROUP_FEATURE_ARITHMETIC_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
  limits_.subgroup_arithmetic =
      (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0 &&
      (subgroup.supportedOperations & needed) == needed;
  if (options.disable_subgroup_ops ||
      env_or_empty("SEQRT_VULKAN_NO_SUBGROUP") == "1") {
    limits_.subgroup_arithmetic = false;
  }
  if (options.disable_fp16_storage) limits_.fp16_storage = false;
  limits_.gemv =
      !options.disable_gemv && env_or_empty("SEQRT_VULKAN_NO_GEMV") != "1";
  limits_.cpu_device =
      props.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  limits_.forms = options.forms;
  const std::string forms = env_or_empty("SEQRT_VULKAN_FORMS");
  if (limits_.forms == SequenceForms::kAuto && forms == "recurrent") {
    limits_.forms = SequenceForms::kRecurrent;
  } else if (limits_.forms == SequenceForms::kAuto && forms == "chunked") {
    limits_.forms = SequenceForms::kChunked;
  }
  uint64_t forced_binding = options.max_binding_bytes;
  std::string env_binding = env_or_empty("SEQRT_VULKAN_MAX_BINDING");
  if (forced_binding == 0 && is_all_digits(env_binding)) {
    forced_binding = std::strtoull(env_binding.c_str(), nullptr, 10);
  }
  limits_.max_storage_buffer_range =
      lowered(uint64_t{l.maxStorageBufferRange}, forced_binding);
  limits_.storage_buffer_offset_alignment = l.minStorageBufferOffsetAlignment;

  info_.backend = "vulkan";
  info_.name = props.properties.deviceName;
  info_.is_host_memory = false;
  uint64_t device_local = 0;
  for (uint32_t i = 0; i < memory_properties_.memoryHeapCount; ++i) {
    if (memory_properties_.memoryHeaps[i].flags &
        VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) {
      device_local += memory_properties_.memoryHeaps[i].size;
    }
  }
  info_.memory_bytes = device_local;
  info_.max_buffer_bytes = l.maxStorageBufferRange;
  info_.shared_memory_bytes = limits_.shared_memory_bytes;
  info_.max_workgroup_invocations = limits_.max_invocations;
  info_.subgroup_size = limits_.subgroup_size;
}

Status Device::submit_and_wait(VkCommandBuffer commands, const char* doing) {
  return submit_and_wait(std::vector<VkCommandBuffer>{commands}, doing);
}

Status Device::submit_and_wait(const std::vector<VkCommandBuffer>& commands,
                               const char* doing) {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  if (take_fault(Fault::kDeviceLost)) {
    return vk_error(VK_ERROR_DEVICE_LOST, doing);
  }
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = static_cast<uint32_t>(commands.size());
  submit.pCommandBuffers = commands.data();
  SEQRT_VK_CHECK(fns_.vkResetFences(device_, 1, &fence_), doing);
  SEQRT_VK_CHECK(fns_.vkQueueSubmit(queue_, 1, &submit, fence_), doing);
  SEQRT_VK_CHECK(fns_.vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX),
                 doing);
  return Status::ok();
}

bool Device::take_fault(Fault fault) {
  Fault expected = fault;
  return fault_.compare_exchange_strong(expected, Fault::kNone);
}

std::vector<std::string> Device::validation_log() const {
  std::lock_guard<std::mutex> lock(log_mutex_);
  return log_;
}

VKAPI_ATTR VkBool32 VKAPI_CALL Device::on_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT, VkDebugUtilsMessageTypeFlagsEXT,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  Device* device = static_cast<Device*>(user);
  device->message_count_.fetch_add(1);
  std::lock_guard<std::mutex> lock(device->log_mutex_);
  if (device->log_.size() < 16 && data != nullptr &&
      data->pMessage != nullptr) {
    device->log_.push_back(data->pMessage);
  }
  return VK_FALSE;
}

}  // namespace seqrt::vulkan
