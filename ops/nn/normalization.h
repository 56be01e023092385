// Pieces shared by LayerNormalization and RMSNormalization: the split of X
// into rows normalised independently, the broadcast of Scale and B onto X,
// and the stash_type attribute.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/shape.h"
#include "graph/status.h"
#include "ops/op_context.h"

namespace seqrt {

// X seen as (rows, cols): axes [0, axis) make the rows, [axis, rank) the
// normalised columns.
struct NormalizedRows {
  int64_t rows = 0;
  int64_t cols = 0;
};
NormalizedRows split_rows(const std::vector<int64_t>& dims, int64_t axis);

// `what` (shape `from`) must broadcast to `to` without changing it (ONNX
// unidirectional broadcasting). Dims that are not both fixed pass.
Status check_broadcast_to(const OpContext& ctx, const std::string& what,
                          const Shape& from, const Shape& to);

// The dtype named by the stash_type attribute (an ONNX data-type code of a
// float type); the reference kernels compute in double whatever it is.
Result<DType> stash_dtype(const OpContext& ctx);

}  // namespace seqrt
