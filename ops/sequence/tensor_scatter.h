// ONNX TensorScatter (opset 24): the validated layout of one call, shared by
// the reference kernel and the backends' kernels.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/status.h"
#include "ops/op_context.h"

namespace seqrt {

// The cache viewed as (batch, prefix, max_len, row): `prefix` is the product
// of the axes between the batch and the sequence axis, `row` the product of
// the axes after it, in bytes.
struct TensorScatterSpec {
  int64_t batch = 0;
  int64_t prefix = 0;
  int64_t max_len = 0;  // the cache's sequence length
  int64_t seq_len = 0;  // the update's sequence length (<= max_len)
  int64_t row_bytes = 0;
  bool circular = false;
  std::vector<int64_t> write_indices;  // one per batch, validated

  // Cache position of update step t of batch b.
  int64_t position(int64_t b, int64_t t) const {
    int64_t p = write_indices[static_cast<size_t>(b)] + t;
    return circular ? p % max_len : p;
  }
};

Result<TensorScatterSpec> tensor_scatter_spec(const KernelContext& ctx);

}  // namespace seqrt
