#include <cstring>

#include "backends/vulkan/kernel.h"

namespace seqrt::vulkan {

#define SEQRT_VULKAN_KERNEL_FAMILY(family) \
  void register_##family##_kernels(KernelTable& table);
#include "backends/vulkan/kernels/kernel_list.def"
#undef SEQRT_VULKAN_KERNEL_FAMILY

const KernelTable& kernel_table() {
  static const KernelTable table = [] {
    KernelTable t("Vulkan");
#define SEQRT_VULKAN_KERNEL_FAMILY(family) register_##family##_kernels(t);
#include "backends/vulkan/kernels/kernel_list.def"
#undef SEQRT_VULKAN_KERNEL_FAMILY
    return t;
  }();
  return table;
}

std::vector<uint8_t> push_bytes(std::initializer_list<uint32_t> words) {
  std::vector<uint8_t> bytes(words.size() * sizeof(uint32_t));
  std::memcpy(bytes.data(), words.begin(), bytes.size());
  return bytes;
}

uint32_t float_word(float value) {
  uint32_t word;
  std::memcpy(&word, &value, sizeof(word));
  return word;
}

}  // namespace seqrt::vulkan
