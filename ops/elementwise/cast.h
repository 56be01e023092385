// The element conversion of Cast and CastLike where either side is a
// storage-only dtype (i4, u4, f4e2m1, a float8), shared by the reference and
// the CPU kernel so both convert alike.
#pragma once

#include "graph/tensor.h"
#include "ops/op_context.h"

namespace seqrt {

// The attributes of Cast and CastLike that matter for storage-only targets.
struct StorageCastOptions {
  bool saturate = true;                            // the float8s
  E8M0Rounding e8m0_rounding = E8M0Rounding::kUp;  // `round_mode`: f8e8m0
};

// The node's `saturate` and `round_mode` (the schema has checked the names).
StorageCastOptions storage_cast_options(const OpContext& ctx);

// Converts every element of `x` into `y` (same element count):
// into a float8, rounding to nearest even, out-of-range values saturating
// to the largest finite value or not (ONNX's `saturate`); into f8e8m0 as
// f64_to_e8m0 does with `round_mode`; into f4e2m1 as f64_to_f4e2m1 does
// (always saturating); into i4/u4, truncating toward zero and wrapping into
// 4 bits as ONNX's Cast does; from them, exactly (a float8 or f4e2m1 into
// an integer truncates toward zero).
void cast_storage_only(const Tensor& x, const StorageCastOptions& options,
                       Tensor& y);

}  // namespace seqrt
