#include "ops/util.h"

#include <algorithm>

namespace seqrt {

Result<int64_t> normalize_axis(const OpContext& ctx, int64_t axis,
                               int64_t rank) {
  // A scalar has no axis; callers index the shape with the result.
  if (rank == 0) {
    return ctx.error("axis {} given for a scalar input, which has no axes",
                     axis);
  }
  if (axis < -rank || axis >= rank) {
    return ctx.error("axis {} is out of range for rank {}", axis, rank);
  }
  return axis < 0 ? axis + rank : axis;
}

Result<Shape> broadcast_shapes(const OpContext& ctx, const Shape& a,
                               const Shape& b) {
  size_t rank = std::max(a.rank(), b.rank());
  std::vector<Dim> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    Dim da = i < rank - a.rank() ? Dim(1) : a[i - (rank - a.rank())];
    Dim db = i < rank - b.rank() ? Dim(1) : b[i - (rank - b.rank())];
    if (da == Dim(1)) {
      out[i] = db;
    } else if (db == Dim(1) || da == db) {
      out[i] = da;
    } else if (da.is_fixed() && db.is_fixed()) {
      return ctx.error("shapes {} and {} cannot be broadcast", a.to_string(),
                       b.to_string());
    } else if (da.is_fixed()) {
      out[i] = da;  // the symbol must equal it (or be 1)
    } else if (db.is_fixed()) {
      out[i] = db;
    } else {
      out[i] = Dim::unknown();
    }
  }
  return Shape(std::move(out));
}

Result<std::optional<Shape>> broadcast_all(
    const OpContext& ctx, const std::vector<std::optional<Shape>>& shapes) {
  Shape out;
  for (const auto& shape : shapes) {
    if (!shape.has_value()) return std::optional<Shape>();
    SEQRT_ASSIGN_OR_RETURN(out, broadcast_shapes(ctx, out, *shape));
  }
  return std::optional<Shape>(std::move(out));
}

Result<std::vector<int64_t>> broadcast_dims(const OpContext& ctx,
                                            const std::vector<int64_t>& a,
                                            const std::vector<int64_t>& b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return ctx.error("shapes {} and {} cannot be broadcast",
                       dims_to_string(a), dims_to_string(b));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) {
    strides[i - 1] = strides[i] * dims[i];
  }
  return strides;
}

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& dims,
                                       const std::vector<int64_t>& out_dims) {
  std::vector<int64_t> own = strides_of(dims);
  std::vector<int64_t> out(out_dims.size(), 0);
  size_t offset = out_dims.size() - dims.size();
  for (size_t i = 0; i < dims.size(); ++i) {
    out[offset + i] = dims[i] == 1 ? 0 : own[i];
  }
  return out;
}

BroadcastIndexer::BroadcastIndexer(
    const std::vector<int64_t>& out_dims,
    const std::vector<std::vector<int64_t>>& input_dims)
    : out_dims_(out_dims) {
  for (const auto& dims : input_dims) {
    strides_.push_back(broadcast_strides(dims, out_dims));
  }
}

int64_t BroadcastIndexer::input_index(size_t k, int64_t i) const {
  const std::vector<int64_t>& strides = strides_[k];
  int64_t index = 0;
  for (size_t d = out_dims_.size(); d-- > 0;) {
    int64_t coord = i % out_dims_[d];
    i /= out_dims_[d];
    index += coord * strides[d];
  }
  return index;
}

std::vector<int64_t> tensor_to_ints(const Tensor& tensor) {
  std::vector<int64_t> out(static_cast<size_t>(tensor.num_elements()));
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    out[i] = tensor.element_i64(i);
  }
  return out;
}

AxisSplit split_around_axis(const std::vector<int64_t>& dims, int64_t axis) {
  AxisSplit s;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    if (d < axis) s.outer *= dims[d];
    if (d == axis) s.n = dims[d];
    if (d > axis) s.inner *= dims[d];
  }
  return s;
}

}  // namespace seqrt
