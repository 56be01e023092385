#include "ops/shape/nd_index.h"

#include <algorithm>

#include "ops/util.h"

namespace seqrt {

Result<int64_t> checked_index(const OpContext& ctx, int64_t index, int64_t size,
                              size_t dim) {
  if (index < -size || index >= size) {
    return ctx.error("index {} is out of range [{}, {}] for dim {} of size {}",
                     index, -size, size - 1, dim, size);
  }
  return index < 0 ? index + size : index;
}

Status check_integer_indices(const OpContext& ctx, const Tensor& indices) {
  if (indices.dtype() != DType::kI64 && indices.dtype() != DType::kI32) {
    return ctx.error("indices must be int64 or int32, got {}",
                     dtype_name(indices.dtype()));
  }
  return Status::ok();
}

namespace {

Status check_nd_shapes(const OpContext& ctx, const Tensor& data,
                       const Tensor& indices, int64_t batch_dims) {
  const int64_t r = static_cast<int64_t>(data.rank());
  const int64_t q = static_cast<int64_t>(indices.rank());
  if (r == 0 || q == 0) {
    return ctx.error("data and indices must have rank >= 1, got {} and {}", r,
                     q);
  }
  if (batch_dims < 0 || batch_dims >= std::min(r, q)) {
    return ctx.error(
        "batch_dims {} must be in [0, {}) (below the ranks of data {} and "
        "indices {})",
        batch_dims, std::min(r, q), dims_to_string(data.dims()),
        dims_to_string(indices.dims()));
  }
  for (int64_t d = 0; d < batch_dims; ++d) {
    if (data.dim(d) != indices.dim(d)) {
      return ctx.error(
          "batch dim {} of data {} and indices {} differ ({} and {})", d,
          dims_to_string(data.dims()), dims_to_string(indices.dims()),
          data.dim(d), indices.dim(d));
    }
  }
  const int64_t k = indices.dim(q - 1);
  if (k < 1 || k > r - batch_dims) {
    return ctx.error(
        "indices' last dim {} must be in [1, {}] (data's rank {} less "
        "batch_dims {})",
        k, r - batch_dims, r, batch_dims);
  }
  return Status::ok();
}

}  // namespace

Result<NdSlices> plan_nd_slices(const OpContext& ctx, const Tensor& data,
                                const Tensor& indices, int64_t batch_dims) {
  SEQRT_RETURN_IF_ERROR(check_integer_indices(ctx, indices));
  SEQRT_RETURN_IF_ERROR(check_nd_shapes(ctx, data, indices, batch_dims));
  const size_t b = static_cast<size_t>(batch_dims);
  const int64_t k = indices.dim(indices.rank() - 1);
  const std::vector<int64_t> strides = strides_of(data.dims());
  NdSlices plan;
  plan.slice = 1;
  for (size_t d = b + static_cast<size_t>(k); d < data.rank(); ++d) {
    plan.slice *= data.dim(d);
  }
  // Each batch entry owns data.shape[b:] and indices.shape[b:-1] tuples.
  const int64_t batch_stride = b == 0 ? data.num_elements() : strides[b - 1];
  int64_t per_batch = 1;
  for (size_t d = b; d + 1 < indices.rank(); ++d) per_batch *= indices.dim(d);
  const int64_t count = indices.num_elements() / k;
  plan.offsets.resize(static_cast<size_t>(count));
  for (int64_t t = 0; t < count; ++t) {
    int64_t offset = (t / per_batch) * batch_stride;
    for (int64_t d = 0; d < k; ++d) {
      const size_t dim = b + static_cast<size_t>(d);
      SEQRT_ASSIGN_OR_RETURN(int64_t index,
                             checked_index(ctx, indices.element_i64(t * k + d),
                                           data.dim(dim), dim));
      offset += index * strides[dim];
    }
    plan.offsets[static_cast<size_t>(t)] = offset;
  }
  return plan;
}

}  // namespace seqrt
