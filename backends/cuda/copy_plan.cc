#include "backends/cuda/copy_plan.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace seqrt::cuda {

int64_t StridedCopy::elements() const {
  int64_t n = 1;
  for (int a = 0; a < rank; ++a) n *= dims[a];
  return n;
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t a = dims.size(); a-- > 1;) {
    strides[a - 1] = strides[a] * dims[a];
  }
  return strides;
}

Result<StridedCopy> make_copy(const std::vector<int64_t>& dims,
                              const std::vector<int64_t>& src_strides,
                              const std::vector<int64_t>& dst_strides,
                              int64_t src_offset, int64_t dst_offset) {
  // Size-1 axes are dropped and an axis is merged into the one before it
  // when both are contiguous in source and destination, so fewer
  // divisions run and rank > 8 is refused only when it cannot be merged.
  StridedCopy merged;
  merged.src_offset = src_offset;
  merged.dst_offset = dst_offset;
  std::vector<int64_t> d, s, t;
  for (size_t a = 0; a < dims.size(); ++a) {
    if (dims[a] == 1) continue;
    if (dims[a] == 0) {
      StridedCopy empty;
      empty.rank = 1;  // dims[0] = 0: no element
      return empty;
    }
    if (!d.empty() && s.back() == src_strides[a] * dims[a] &&
        t.back() == dst_strides[a] * dims[a]) {
      d.back() *= dims[a];
      s.back() = src_strides[a];
      t.back() = dst_strides[a];
      continue;
    }
    d.push_back(dims[a]);
    s.push_back(src_strides[a]);
    t.push_back(dst_strides[a]);
  }
  if (d.size() > static_cast<size_t>(kMaxCopyRank)) {
    return unsupported(
        "cuda: a strided copy of rank {} (after merging contiguous axes) "
        "exceeds {}",
        d.size(), kMaxCopyRank);
  }
  merged.rank = static_cast<int>(d.size());
  std::copy(d.begin(), d.end(), merged.dims);
  std::copy(s.begin(), s.end(), merged.src_strides);
  std::copy(t.begin(), t.end(), merged.dst_strides);
  return merged;
}

Result<StridedCopy> transpose_copy(const std::vector<int64_t>& in_dims,
                                   const std::vector<int64_t>& perm) {
  if (perm.size() != in_dims.size()) {
    return invalid_argument("cuda: perm has {} axes, the input {}", perm.size(),
                            in_dims.size());
  }
  std::vector<int64_t> in_strides = row_major_strides(in_dims);
  std::vector<int64_t> out_dims(perm.size()), src(perm.size());
  std::vector<bool> seen(perm.size(), false);
  for (size_t a = 0; a < perm.size(); ++a) {
    const int64_t p = perm[a];
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p]) {
      return invalid_argument("cuda: perm is not a permutation of 0..{}",
                              perm.size() - 1);
    }
    seen[p] = true;
    out_dims[a] = in_dims[p];
    src[a] = in_strides[p];
  }
  return make_copy(out_dims, src, row_major_strides(out_dims), 0, 0);
}

Result<StridedCopy> broadcast_copy(const std::vector<int64_t>& in_dims,
                                   const std::vector<int64_t>& out_dims) {
  if (in_dims.size() > out_dims.size()) {
    return invalid_argument("cuda: cannot broadcast rank {} to rank {}",
                            in_dims.size(), out_dims.size());
  }
  const size_t lead = out_dims.size() - in_dims.size();
  std::vector<int64_t> in_strides = row_major_strides(in_dims);
  std::vector<int64_t> src(out_dims.size(), 0);
  for (size_t a = 0; a < in_dims.size(); ++a) {
    if (in_dims[a] == out_dims[lead + a]) {
      src[lead + a] = in_strides[a];
    } else if (in_dims[a] != 1) {
      return invalid_argument("cuda: cannot broadcast dim {} to {}", in_dims[a],
                              out_dims[lead + a]);
    }
  }
  return make_copy(out_dims, src, row_major_strides(out_dims), 0, 0);
}

Result<StridedCopy> slice_copy(const std::vector<int64_t>& in_dims,
                               const std::vector<int64_t>& starts,
                               const std::vector<int64_t>& ends,
                               const std::vector<int64_t>& steps,
                               std::vector<int64_t>& out_dims) {
  const size_t rank = in_dims.size();
  if (starts.size() != rank || ends.size() != rank || steps.size() != rank) {
    return invalid_argument("cuda: slice bounds must cover all {} axes", rank);
  }
  std::vector<int64_t> in_strides = row_major_strides(in_dims);
  std::vector<int64_t> src(rank);
  out_dims.assign(rank, 0);
  int64_t offset = 0;
  for (size_t a = 0; a < rank; ++a) {
    const int64_t dim = in_dims[a];
    const int64_t step = steps[a];
    if (step == 0) return invalid_argument("cuda: slice step is 0");
    int64_t start = starts[a] < 0 ? starts[a] + dim : starts[a];
    int64_t end = ends[a] < 0 ? ends[a] + dim : ends[a];
    int64_t count = 0;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      if (end > start) count = (end - start + step - 1) / step;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      if (start > end) count = (start - end + (-step) - 1) / (-step);
    }
    out_dims[a] = count;
    src[a] = in_strides[a] * step;
    if (count > 0) offset += start * in_strides[a];
  }
  return make_copy(out_dims, src, row_major_strides(out_dims), offset, 0);
}

Result<StridedCopy> place_part_copy(const std::vector<int64_t>& part_dims,
                                    const std::vector<int64_t>& whole_dims,
                                    size_t axis, int64_t offset,
                                    bool into_whole) {
  if (part_dims.size() != whole_dims.size() || axis >= whole_dims.size()) {
    return invalid_argument("cuda: part of rank {} in a whole of rank {}",
                            part_dims.size(), whole_dims.size());
  }
  std::vector<int64_t> part = row_major_strides(part_dims);
  std::vector<int64_t> whole = row_major_strides(whole_dims);
  const int64_t whole_offset = offset * whole[axis];
  return into_whole ? make_copy(part_dims, part, whole, 0, whole_offset)
                    : make_copy(part_dims, whole, part, whole_offset, 0);
}

Result<SelectIndex> select_index(const std::vector<int64_t>& cond_dims,
                                 const std::vector<int64_t>& x_dims,
                                 const std::vector<int64_t>& y_dims,
                                 std::vector<int64_t>& out_dims) {
  const std::vector<int64_t>* operands[3] = {&cond_dims, &x_dims, &y_dims};
  size_t rank = std::max({cond_dims.size(), x_dims.size(), y_dims.size()});
  if (rank > static_cast<size_t>(kMaxCopyRank)) {
    return unsupported("cuda: Where broadcasts up to rank {}, got {}",
                       kMaxCopyRank, rank);
  }
  SelectIndex index;
  index.rank = static_cast<int>(rank);
  out_dims.assign(rank, 1);
  int64_t stride[3] = {1, 1, 1};
  for (size_t r = 0; r < rank; ++r) {
    const size_t axis = rank - 1 - r;
    int64_t dim[3];
    int64_t out = 1;
    for (int k = 0; k < 3; ++k) {
      const std::vector<int64_t>& d = *operands[k];
      dim[k] = r < d.size() ? d[d.size() - 1 - r] : 1;
      if (dim[k] != 1) {
        if (out != 1 && out != dim[k]) {
          return invalid_argument("cuda: cannot broadcast dims {} and {}", out,
                                  dim[k]);
        }
        out = dim[k];
      }
    }
    out_dims[axis] = out;
    index.dims[axis] = out;
    for (int k = 0; k < 3; ++k) {
      index.strides[k][axis] = dim[k] == 1 ? 0 : stride[k];
      stride[k] *= dim[k];
    }
  }
  return index;
}

Result<GatherShape> gather_shape(const std::vector<int64_t>& data_dims,
                                 int64_t axis, std::vector<int64_t>& indices) {
  const int64_t rank = static_cast<int64_t>(data_dims.size());
  if (axis < -rank || axis >= rank) {
    return invalid_argument("cuda: Gather axis {} is outside [-{}, {})", axis,
                            rank, rank);
  }
  if (axis < 0) axis += rank;
  GatherShape shape;
  for (int64_t a = 0; a < axis; ++a) shape.outer *= data_dims[a];
  for (int64_t a = axis + 1; a < rank; ++a) shape.inner *= data_dims[a];
  shape.axis_length = data_dims[axis];
  shape.indices = static_cast<int64_t>(indices.size());
  for (int64_t& i : indices) {
    if (i < -shape.axis_length || i >= shape.axis_length) {
      return invalid_argument(
          "cuda: Gather index {} is outside [-{}, {}) of axis {}", i,
          shape.axis_length, shape.axis_length, axis);
    }
    if (i < 0) i += shape.axis_length;
  }
  return shape;
}

Result<ReduceIndex> reduce_index(const std::vector<int64_t>& dims,
                                 const std::vector<bool>& reduced) {
  if (dims.size() > static_cast<size_t>(kMaxCopyRank)) {
    return unsupported("cuda: reductions take inputs up to rank {}, got {}",
                       kMaxCopyRank, dims.size());
  }
  ReduceIndex index;
  std::vector<int64_t> strides = row_major_strides(dims);
  for (size_t a = 0; a < dims.size(); ++a) {
    AxesIndex& part = reduced[a] ? index.reduced : index.kept;
    part.dims[part.rank] = dims[a];
    part.strides[part.rank] = strides[a];
    ++part.rank;
    (reduced[a] ? index.count : index.outputs) *= dims[a];
  }
  return index;
}

bool affine_shared_by_rows(const std::vector<int64_t>& param_dims,
                           const std::vector<int64_t>& x_dims, size_t axis) {
  if (param_dims.size() > x_dims.size()) return false;
  const size_t lead = x_dims.size() - param_dims.size();
  int64_t count = 1;
  for (size_t a = 0; a < param_dims.size(); ++a) {
    if (lead + a < axis && param_dims[a] != 1) return false;
    count *= param_dims[a];
  }
  int64_t cols = 1;
  for (size_t a = axis; a < x_dims.size(); ++a) cols *= x_dims[a];
  return count == cols;
}

void run_copy_on_host(const void* src, void* dst, size_t element_size,
                      const StridedCopy& copy) {
  const int64_t n = copy.elements();
  const char* from = static_cast<const char*>(src);
  char* to = static_cast<char*>(dst);
  for (int64_t i = 0; i < n; ++i) {
    int64_t s = 0, d = 0;
    copy_offsets(copy, i, &s, &d);
    std::memcpy(to + d * element_size, from + s * element_size, element_size);
  }
}

}  // namespace seqrt::cuda
