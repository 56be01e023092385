// Index tuples into leading dims of data, as GatherND reads and ScatterND
// writes them, and the index checks every indexing op of ops/shape/ shares
// (Scatter*, GatherND). The reference kernels and the backends plan with
// the same code, so all refuse the same inputs with the same message.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/status.h"
#include "graph/tensor.h"
#include "ops/op_context.h"

namespace seqrt {

// `index` along dim `dim` of `size`, negative counting from the back;
// out of range is an error naming the index, the dim and its size.
Result<int64_t> checked_index(const OpContext& ctx, int64_t index, int64_t size,
                              size_t dim);

// Kernels read indices as int64 or int32 (inference allows any integer).
Status check_integer_indices(const OpContext& ctx, const Tensor& indices);

// Slices of data picked by index tuples: slice t (of `slice` elements)
// starts at data element offsets[t]; the tuples are row-major over
// indices.shape[:-1].
struct NdSlices {
  std::vector<int64_t> offsets;
  int64_t slice = 1;
};

// The tuples of `indices` (last dim k) into data's dims [batch_dims,
// batch_dims + k), the first batch_dims dims of data and indices being
// matched pairwise: slices of data.shape[batch_dims + k:], checked.
Result<NdSlices> plan_nd_slices(const OpContext& ctx, const Tensor& data,
                                const Tensor& indices, int64_t batch_dims);

}  // namespace seqrt
