// Helpers shared by op definitions: axes, broadcasting, strides.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "graph/shape.h"
#include "graph/status.h"
#include "graph/tensor.h"
#include "ops/op_context.h"

namespace seqrt {

// Maps a possibly negative axis into [0, rank); an error names the op
// (a scalar, rank 0, has no axis).
Result<int64_t> normalize_axis(const OpContext& ctx, int64_t axis,
                               int64_t rank);

// Numpy-style broadcast of symbolic shapes. Unknown dims stay unknown;
// a symbol against 1 keeps the symbol; fixed sizes that differ (neither 1)
// are an error.
Result<Shape> broadcast_shapes(const OpContext& ctx, const Shape& a,
                               const Shape& b);
// Broadcast of several optional shapes: nullopt if any rank is unknown.
Result<std::optional<Shape>> broadcast_all(
    const OpContext& ctx, const std::vector<std::optional<Shape>>& shapes);
// Concrete broadcast for kernels.
Result<std::vector<int64_t>> broadcast_dims(const OpContext& ctx,
                                            const std::vector<int64_t>& a,
                                            const std::vector<int64_t>& b);

// Row-major strides in elements.
std::vector<int64_t> strides_of(const std::vector<int64_t>& dims);

// Strides for reading `dims` broadcast to `out_dims` (0 on broadcast axes).
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& dims,
                                       const std::vector<int64_t>& out_dims);

// Maps a flat output index to the flat index in each broadcast input.
class BroadcastIndexer {
 public:
  BroadcastIndexer(const std::vector<int64_t>& out_dims,
                   const std::vector<std::vector<int64_t>>& input_dims);
  // Flat index into input `k` for flat output index `i`.
  int64_t input_index(size_t k, int64_t i) const;

 private:
  std::vector<int64_t> out_dims_;
  std::vector<std::vector<int64_t>> strides_;
};

// A tensor viewed as [outer, n, inner] around one axis (reductions and
// scans along an axis).
struct AxisSplit {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
};
AxisSplit split_around_axis(const std::vector<int64_t>& dims, int64_t axis);

// The values of a 1-D (or scalar) integer tensor, e.g. Reshape's shape.
std::vector<int64_t> tensor_to_ints(const Tensor& tensor);

}  // namespace seqrt
