#include "backends/vulkan/kernels/kernel_util.h"

#include <cstring>

namespace seqrt::vulkan {

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& dims,
                                       const std::vector<int64_t>& out_dims) {
  std::vector<int64_t> own = row_major_strides(dims);
  std::vector<int64_t> strides(out_dims.size(), 0);
  size_t shift = out_dims.size() - dims.size();
  for (size_t i = 0; i < dims.size(); ++i) {
    strides[i + shift] = dims[i] == 1 ? 0 : own[i];
  }
  return strides;
}

int64_t element_count(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

std::array<uint32_t, 3> groups_for(int64_t count, const DeviceLimits& limits) {
  int64_t groups = (count + kLocalSize - 1) / kLocalSize;
  int64_t max_x =
      limits.max_group_count[0] == 0 ? 65535 : limits.max_group_count[0];
  if (groups <= max_x) return {static_cast<uint32_t>(groups), 1, 1};
  int64_t y = (groups + max_x - 1) / max_x;
  return {static_cast<uint32_t>(max_x), static_cast<uint32_t>(y), 1};
}

Status require_f32(const Graph& graph, const Node& node) {
  for (ValueId id : node.inputs) {
    if (id != kNoValue && graph.value(id).dtype != DType::kF32) {
      return unsupported("{}: input '{}' is {}; the Vulkan kernel takes f32",
                         node.label(), graph.value(id).name,
                         dtype_name(graph.value(id).dtype));
    }
  }
  for (ValueId id : node.outputs) {
    if (id != kNoValue && graph.value(id).dtype != DType::kF32) {
      return unsupported("{}: output '{}' is {}; the Vulkan kernel makes f32",
                         node.label(), graph.value(id).name,
                         dtype_name(graph.value(id).dtype));
    }
  }
  return Status::ok();
}

void append_padded(std::vector<uint32_t>& words,
                   const std::vector<int64_t>& values, uint32_t pad) {
  for (int i = 0; i < kMaxRank; ++i) {
    words.push_back(i < static_cast<int>(values.size())
                        ? static_cast<uint32_t>(values[i])
                        : pad);
  }
}

std::vector<uint8_t> words_to_bytes(const std::vector<uint32_t>& words) {
  std::vector<uint8_t> bytes(words.size() * sizeof(uint32_t));
  std::memcpy(bytes.data(), words.data(), bytes.size());
  return bytes;
}

}  // namespace seqrt::vulkan
