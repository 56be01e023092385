// Copies a strided view of a kernel's input 0 into one of its outputs: the
// shared copy loop of Transpose, Expand, Slice and Split (generic over
// dtypes: elements move as bytes).
#pragma once

#include <cstdint>
#include <vector>

#include "ops/op_context.h"

namespace seqrt::cpu {

// Output `i` as the view of input 0 at element `base` with `strides`
// (element strides, negative for reversed axes) over `dims`.
Status run_strided(KernelContext& ctx, const std::vector<int64_t>& dims,
                   const std::vector<int64_t>& strides, int64_t base = 0,
                   size_t i = 0);

}  // namespace seqrt::cpu
