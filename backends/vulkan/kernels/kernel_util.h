// Shape arithmetic the standard-op kernels share: row-major strides,
// broadcast strides, workgroup counts, and the fp32 check.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/vulkan/kernel.h"

namespace seqrt::vulkan {

// The generic shaders take at most this many dims (more are merged or
// rejected by supports()).
inline constexpr int kMaxRank = 6;
// Invocations per workgroup of the 1-D shaders.
inline constexpr uint32_t kLocalSize = 64;

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims);
// Strides (in elements) that read `dims` as if broadcast to `out_dims`
// (numpy rules: right-aligned, size-1 dims get stride 0).
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& dims,
                                       const std::vector<int64_t>& out_dims);
int64_t element_count(const std::vector<int64_t>& dims);
// Workgroups covering `count` invocations of kLocalSize, as x (and y when
// x would pass the device's limit).
std::array<uint32_t, 3> groups_for(int64_t count, const DeviceLimits& limits);
// kUnsupported naming the first input or output that is not fp32.
Status require_f32(const Graph& graph, const Node& node);
// The default support rule (VulkanKernel::supports null): every present
// input and output is f32.
inline Status require_all_f32(const Graph& graph, const Node& node) {
  return require_f32(graph, node);
}
// Appends `values` padded to kMaxRank words.
void append_padded(std::vector<uint32_t>& words,
                   const std::vector<int64_t>& values, uint32_t pad);
std::vector<uint8_t> words_to_bytes(const std::vector<uint32_t>& words);

}  // namespace seqrt::vulkan
