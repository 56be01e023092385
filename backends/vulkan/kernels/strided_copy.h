// The strided-copy shader (shaders/strided_copy.comp) over 32-bit words,
// shared by Transpose, Concat, Expand, Slice and Split, and their support
// rules (f32, i32 and i64 tensors).
#pragma once

#include <cstdint>
#include <vector>

#include "backends/vulkan/kernels/kernel_util.h"

namespace seqrt::vulkan {

// One strided copy: `dims` (elements) with strides in elements; a trailing
// axis of `words` per element is added.
Status strided_copy(const BufferSlice& src, const BufferSlice& dst,
                    std::vector<int64_t> dims, std::vector<int64_t> src_strides,
                    std::vector<int64_t> dst_strides, int64_t src_base,
                    int64_t dst_base, uint32_t words, const Node& node,
                    Recorder& recorder);

// kUnsupported unless the output is whole 32-bit words (f32, i32, i64).
Status supports_words(const Graph& graph, const Node& node,
                      const DeviceLimits& limits);
// Slice's and Split's index inputs may be made on the device from dims;
// Expand's shape likewise.
Status supports_planned_words(const Graph& graph, const Node& node,
                              const DeviceLimits& limits);

}  // namespace seqrt::vulkan
