// seqrt::Linear with weight-only quantized W (bits 4 or 8,
// ops/linalg/quantized_linear.h) on Vulkan: shaders/quantized_gemv.comp for
// up to 8 rows (decode), shaders/quantized_gemm.comp above. matmul.cc's
// Linear entry sends a node here when its `bits` is not 0.
#pragma once

#include "backends/vulkan/kernel.h"

namespace seqrt::vulkan {

// seqrt::Linear's `activation` as the shaders number it
// (shaders/activation.glsl), or kInvalidArgument naming the node.
Result<uint32_t> linear_activation_code(const Node& node);

// kUnsupported naming the node unless bits is 4 or 8 and X, B and Y are
// f32, W and W_zero_point u8, W_scale f32.
Status supports_quantized_linear(const Graph& graph, const Node& node);
Result<KernelTiling> plan_quantized_linear(const NodeArgs& args,
                                           const DeviceLimits& limits);
Status record_quantized_linear(const NodeArgs& args, const KernelTiling& tiling,
                               Recorder& recorder);

}  // namespace seqrt::vulkan
