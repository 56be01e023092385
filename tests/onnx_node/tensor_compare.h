// Compares a backend's output with an ONNX node test's expected output:
// same dtype and dims, then element by element within a per-dtype
// tolerance. NaN equals NaN and infinities must match exactly.
#pragma once

#include <optional>
#include <string>

#include "graph/dtype.h"
#include "graph/tensor.h"

namespace seqrt::onnx_node {

// |got - expected| <= atol + rtol * |expected| passes.
struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

// f32 about as ONNX's own runner; the 16-bit floats looser for their short
// mantissas; f64 tight; integers and bool exact.
Tolerance tolerance_for(DType dtype);

// nullopt when `got` matches `expected`; otherwise what differs first,
// e.g. "element 5 (index [1,2]): got 0.5, expected 0.6 (f32: rtol 0.001,
// atol 1e-05)" or "dims (2,3), expected (3,2)".
std::optional<std::string> compare_tensors(const Tensor& got,
                                           const Tensor& expected);

}  // namespace seqrt::onnx_node
