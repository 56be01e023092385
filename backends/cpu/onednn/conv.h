// Convolution (1-D and 2-D, grouped, strided, dilated, padded, with bias)
// of f32 tensors on oneDNN's convolution primitive. Source and destination
// stay in the graph's plain layout (N, C, spatial...); constant weights are
// reordered once into the layout the primitive asks for (PackedWeights),
// other weights are read in place.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "backends/cpu/onednn/primitive_cache.h"
#include "graph/status.h"

namespace seqrt::cpu::onednn {

struct ConvProblem {
  std::vector<int64_t> src_dims;  // (N, C, spatial...)
  // ONNX's (M, C/group, kernel...); conv_weights_dims() gives oneDNN's.
  std::vector<int64_t> weights_dims;
  std::vector<int64_t> dst_dims;  // (N, M, spatial...)
  int64_t group = 1;
  // One per spatial dim. Dilations as ONNX counts them (1: dense).
  std::vector<int64_t> strides, dilations, pad_begin, pad_end;
  bool bias = false;
  bool packed_weights = false;  // weights in the primitive's own layout

  std::string key() const;
};

// The weights' dims as oneDNN reads them: ONNX's, or (group, M/group,
// C/group, kernel...) when grouped. ONNX's row-major data is already laid
// out that way.
std::vector<int64_t> conv_weights_dims(const ConvProblem& problem);

// The primitive for `problem`, from the cache or created into it; an entry
// without a primitive when oneDNN has no implementation for it.
Result<std::shared_ptr<const CachedPrimitive>> conv_primitive(
    const ConvProblem& problem, const std::string& label);

// Runs `primitive` (a convolution): `weights` is memory in
// primitive.weights's layout, `bias` (M) is null when the problem has none.
Status execute_conv(const CachedPrimitive& primitive, const std::string& label,
                    const float* src, const dnnl::memory& weights,
                    const float* bias, float* dst);

}  // namespace seqrt::cpu::onednn
