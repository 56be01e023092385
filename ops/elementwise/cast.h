// The element conversion of Cast and CastLike where either side is a
// storage-only dtype (i4, u4, a float8), shared by the reference and the
// CPU kernel so both convert alike.
#pragma once

#include "graph/tensor.h"

namespace seqrt {

// Converts every element of `x` into `y` (same element count):
// into a float8, rounding to nearest even, out-of-range values saturating
// to the largest finite value or not (ONNX's `saturate`); into i4/u4,
// truncating toward zero and wrapping into 4 bits as ONNX's Cast does;
// from them, exactly (a float8 into an integer truncates toward zero).
void cast_storage_only(const Tensor& x, bool saturate, Tensor& y);

}  // namespace seqrt
