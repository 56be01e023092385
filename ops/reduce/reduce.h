// What the reduction ops' kernels share across backends.
#pragma once

#include "graph/dtype.h"
#include "graph/status.h"
#include "ops/op_context.h"

namespace seqrt {

enum class ReduceKind { kSum, kMean, kMax, kMin };

// The value of a reduction over no elements (ONNX 18): 0 for sums, the
// lowest value for max (-inf for floats), the highest for min; an error for
// the mean of no integers.
Result<double> reduce_empty_value(const OpContext& ctx, ReduceKind kind,
                                  DType dtype);

}  // namespace seqrt
