// ReduceSum, ReduceMean, ReduceMax and ReduceMin of f32 tensors on
// oneDNN's reduction primitive: the output keeps the input's rank with 1
// on every reduced axis (keepdims or not only changes how it is named).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/status.h"

namespace seqrt::cpu::onednn {

enum class Reduction { kSum, kMean, kMax, kMin };

// y (`dims` with 1 on reduced axes, `reduced_dims`) = the reduction of x
// (`dims`). False: oneDNN has no primitive for it and nothing was written.
Result<bool> reduce(const std::string& label, Reduction kind,
                    const std::vector<int64_t>& dims,
                    const std::vector<int64_t>& reduced_dims, const float* x,
                    float* y);

}  // namespace seqrt::cpu::onednn
