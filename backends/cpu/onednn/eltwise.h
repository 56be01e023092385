// Unary math and activations of f32 tensors on oneDNN's eltwise primitive.
// The tensor is seen as one run of elements: elementwise ops do not care
// about its shape, and one primitive then serves every shape of that size.
#pragma once

#include <cstdint>
#include <string>

#include "graph/status.h"

namespace seqrt::cpu::onednn {

enum class Eltwise {
  kRelu,
  kTanh,
  kSigmoid,  // eltwise_logistic
  kExp,
  kLog,
  kSqrt,
  kAbs,
  kGeluErf,
  kGeluTanh,
  kSoftplus,  // eltwise_soft_relu: log(1 + e^x), no log1p (inexact for x ≪ 0)
  kNeg,       // eltwise_linear with alpha −1
  kReciprocal,  // eltwise_pow with exponent −1
};

// y = f(x) over `count` elements (y may be x). False: oneDNN has no
// primitive for it and nothing was written.
Result<bool> eltwise(const std::string& label, Eltwise kind, int64_t count,
                     const float* x, float* y);

}  // namespace seqrt::cpu::onednn
