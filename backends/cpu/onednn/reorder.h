// Transpose of an f32 tensor as a oneDNN reorder: the source is described
// with the output's dims and the permuted strides of the input, the
// destination is row-major, and oneDNN's reorder copies between the two.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/status.h"

namespace seqrt::cpu::onednn {

// dst (row-major `dims`) = src read with `src_strides` (elements, one per
// dim of `dims`). False: oneDNN has no primitive for it and nothing was
// written.
Result<bool> strided_copy(const std::string& label,
                          const std::vector<int64_t>& dims,
                          const std::vector<int64_t>& src_strides,
                          const float* src, float* dst);

}  // namespace seqrt::cpu::onednn
