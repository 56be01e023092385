#include "ops/shape/shape_util.h"

#include <algorithm>
#include <cstring>

#include "ops/util.h"

namespace seqrt {

void copy_elements(const Tensor& src, int64_t src_index, Tensor& dst,
                   int64_t dst_index, int64_t count) {
  assert(src.dtype() == dst.dtype() && "copy_elements: dtypes differ");
  if (count <= 0) return;
  size_t size = dtype_size(src.dtype());
  const auto* from = static_cast<const uint8_t*>(src.data());
  auto* to = static_cast<uint8_t*>(dst.mutable_data());
  std::memcpy(to + static_cast<size_t>(dst_index) * size,
              from + static_cast<size_t>(src_index) * size,
              static_cast<size_t>(count) * size);
}

Result<std::vector<int64_t>> read_int_list(const OpContext& ctx,
                                           const Tensor& tensor,
                                           const char* what) {
  if (!is_integer(tensor.dtype())) {
    return ctx.error("{} must be an integer tensor, got {}", what,
                     dtype_name(tensor.dtype()));
  }
  if (tensor.rank() > 1) {
    return ctx.error("{} must be 1-D, got shape {}", what,
                     dims_to_string(tensor.dims()));
  }
  return tensor_to_ints(tensor);
}

Result<int64_t> read_int_scalar(const OpContext& ctx, const Tensor& tensor,
                                const char* what) {
  if (!is_integer(tensor.dtype()) || tensor.num_elements() != 1) {
    return ctx.error("{} must be one integer, got {} of shape {}", what,
                     dtype_name(tensor.dtype()), dims_to_string(tensor.dims()));
  }
  return tensor.element_i64(0);
}

Result<std::optional<std::vector<int64_t>>> known_int_list(
    const InferContext& ctx, size_t i, const char* what) {
  using Known = std::optional<std::vector<int64_t>>;
  if (!ctx.has_input(i)) return Known();
  if (!is_integer(ctx.input_dtype(i))) {
    return ctx.error("{} must be an integer tensor, got {}", what,
                     dtype_name(ctx.input_dtype(i)));
  }
  const std::optional<Shape>& shape = ctx.input_shape(i);
  if (shape && shape->rank() > 1) {
    return ctx.error("{} must be 1-D, got shape {}", what, shape->to_string());
  }
  if (ctx.input_value(i) == nullptr) return Known();
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> values,
                         read_int_list(ctx, *ctx.input_value(i), what));
  return Known(std::move(values));
}

std::optional<int64_t> known_length(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return std::nullopt;
  if (const Tensor* value = ctx.input_value(i)) return value->num_elements();
  const std::optional<Shape>& shape = ctx.input_shape(i);
  if (!shape) return std::nullopt;
  if (shape->rank() == 0) return 1;
  if (shape->rank() == 1 && (*shape)[0].is_fixed()) return (*shape)[0].value();
  return std::nullopt;
}

Status check_dim_size(const OpContext& ctx, const Dim& dim) {
  if (dim.is_fixed() && dim.value() > kMaxElements) {
    return ctx.error("dim {} is larger than 2^48", dim.value());
  }
  return Status::ok();
}

Shape unknown_shape(size_t rank) {
  return Shape(std::vector<Dim>(rank, Dim::unknown()));
}

Result<std::vector<int64_t>> normalize_axes(const OpContext& ctx,
                                            const std::vector<int64_t>& axes,
                                            int64_t rank) {
  std::vector<int64_t> out;
  out.reserve(axes.size());
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank) {
      return ctx.error("axis {} is out of range for rank {}", axis, rank);
    }
    int64_t normalized = axis < 0 ? axis + rank : axis;
    if (std::find(out.begin(), out.end(), normalized) != out.end()) {
      return ctx.error("axis {} is repeated", axis);
    }
    out.push_back(normalized);
  }
  return out;
}

CoordinateCounter::CoordinateCounter(std::vector<int64_t> dims)
    : dims_(std::move(dims)), coords_(dims_.size(), 0) {
  for (int64_t dim : dims_) done_ = done_ || dim == 0;
}

void CoordinateCounter::next() {
  for (size_t d = dims_.size(); d-- > 0;) {
    if (++coords_[d] < dims_[d]) return;
    coords_[d] = 0;
  }
  done_ = true;
}

}  // namespace seqrt
