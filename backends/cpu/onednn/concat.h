// Concat of f32 tensors along one axis on oneDNN's concat primitive.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/status.h"

namespace seqrt::cpu::onednn {

// dst = the inputs (dims[i], data srcs[i], row-major, equal rank and equal
// dims but on `axis`) side by side along `axis`. False: oneDNN has no
// primitive for it and nothing was written.
Result<bool> concat(const std::string& label,
                    const std::vector<std::vector<int64_t>>& dims,
                    const std::vector<const float*>& srcs, int64_t axis,
                    float* dst);

}  // namespace seqrt::cpu::onednn
