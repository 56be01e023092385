// Filling with values, shared by Range, ConstantOfShape and Pad: a scalar
// as the words of one element, and the range.comp dispatch.
#pragma once

#include <array>
#include <cstdint>

#include "backends/vulkan/kernels/kernel_util.h"

namespace seqrt::vulkan {

// A scalar constant as the words of one element of `dtype` (f32, i32, i64).
std::array<uint32_t, 2> value_words(const Tensor& value, DType dtype);

// start + i * delta into `out` (count elements of dtype; delta 0 fills).
Status record_sequence(const BufferSlice& out, DType dtype, int64_t count,
                       std::array<uint32_t, 2> start, uint32_t delta,
                       Recorder& recorder);

}  // namespace seqrt::vulkan
