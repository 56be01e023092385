// Binary arithmetic of f32 tensors on oneDNN's binary primitive, with the
// broadcasting oneDNN 2.6 supports: the first operand has the output's
// shape and the second broadcasts to it (dims equal or 1). Other
// broadcasts (the first operand broadcast) stay on the own kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/status.h"

namespace seqrt::cpu::onednn {

enum class Binary { kAdd, kSub, kMul, kDiv, kMax, kMin };

// dst = a op b; a and dst have `dims`, b has `b_dims` (the same rank, each
// dim equal or 1). dst may be a. False: oneDNN has no primitive for it (or
// the shapes are not of that form) and nothing was written.
Result<bool> binary(const std::string& label, Binary kind,
                    const std::vector<int64_t>& dims, const float* a,
                    const std::vector<int64_t>& b_dims, const float* b,
                    float* dst);

}  // namespace seqrt::cpu::onednn
