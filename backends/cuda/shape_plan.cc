#include "backends/cuda/shape_plan.h"

#include "backends/cuda/conv_plan.h"

#include <fmt/format.h>

#include <algorithm>

namespace seqrt::cuda {

Result<StridedCopy> tile_copy(const std::vector<int64_t>& in_dims,
                              const std::vector<int64_t>& repeats) {
  if (repeats.size() != in_dims.size()) {
    return invalid_argument(
        "cuda: Tile needs one repeat per axis, got {} for {}", repeats.size(),
        in_dims.size());
  }
  const std::vector<int64_t> in_strides = row_major_strides(in_dims);
  std::vector<int64_t> dims, src;
  for (size_t a = 0; a < in_dims.size(); ++a) {
    if (repeats[a] < 0) {
      return invalid_argument("cuda: Tile repeats must be >= 0, got {}",
                              repeats[a]);
    }
    dims.push_back(repeats[a]);
    src.push_back(0);
    dims.push_back(in_dims[a]);
    src.push_back(in_strides[a]);
  }
  // (r_0, d_0, r_1, d_1, ...) row-major is the output's own layout.
  return make_copy(dims, src, row_major_strides(dims), 0, 0);
}

Result<PadMode> pad_mode(const std::string& name) {
  if (name == "constant") return PadMode::kConstant;
  if (name == "reflect") return PadMode::kReflect;
  if (name == "edge") return PadMode::kEdge;
  if (name == "wrap") return PadMode::kWrap;
  return invalid_argument("cuda: unknown Pad mode '{}'", name);
}

Result<PadIndex> pad_index(const std::vector<int64_t>& in_dims,
                           const std::vector<int64_t>& out_dims,
                           const std::vector<int64_t>& begin, PadMode mode) {
  const size_t rank = in_dims.size();
  if (out_dims.size() != rank || begin.size() != rank) {
    return invalid_argument("cuda: Pad plan needs rank {} dims and pads", rank);
  }
  if (rank > size_t(kMaxCopyRank)) {
    return unsupported("cuda: Pad handles rank <= {}, got {}", kMaxCopyRank,
                       rank);
  }
  PadIndex p;
  p.rank = static_cast<int>(rank);
  p.mode = mode;
  const std::vector<int64_t> strides = row_major_strides(in_dims);
  for (size_t a = 0; a < rank; ++a) {
    if (mode != PadMode::kConstant && in_dims[a] == 0 && out_dims[a] > 0) {
      return invalid_argument("cuda: Pad cannot read empty axis {}", a);
    }
    p.in_dims[a] = in_dims[a];
    p.out_dims[a] = out_dims[a];
    p.begin[a] = begin[a];
    p.in_strides[a] = strides[a];
  }
  return p;
}

Result<GatherElementsIndex> gather_elements_index(
    const std::vector<int64_t>& data_dims,
    const std::vector<int64_t>& index_dims, int64_t axis,
    std::vector<int64_t>& indices) {
  const size_t rank = data_dims.size();
  if (index_dims.size() != rank || axis < 0 || axis >= int64_t(rank)) {
    return invalid_argument(
        "cuda: GatherElements needs indices of data's rank and an axis in "
        "range");
  }
  if (rank > size_t(kMaxCopyRank)) {
    return unsupported("cuda: GatherElements handles rank <= {}, got {}",
                       kMaxCopyRank, rank);
  }
  const int64_t size = data_dims[axis];
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] < -size || indices[i] >= size) {
      return invalid_argument(
          "index {} (element {}) is out of range [{}, {}] for axis {} of size "
          "{}",
          indices[i], i, -size, size - 1, axis, size);
    }
    if (indices[i] < 0) indices[i] += size;
  }
  GatherElementsIndex g;
  g.rank = static_cast<int>(rank);
  g.axis = static_cast<int>(axis);
  const std::vector<int64_t> strides = row_major_strides(data_dims);
  for (size_t a = 0; a < rank; ++a) {
    g.out_dims[a] = index_dims[a];
    g.data_strides[a] = strides[a];
  }
  return g;
}

Result<ConvShape> conv_shape(const std::vector<int64_t>& x_dims,
                             const std::vector<int64_t>& w_dims,
                             const std::vector<int64_t>& out_dims,
                             int64_t group, const std::vector<int64_t>& strides,
                             const std::vector<int64_t>& dilations,
                             const std::vector<int64_t>& pads,
                             const std::string& auto_pad) {
  const size_t rank = x_dims.size();
  if ((rank != 3 && rank != 4) || w_dims.size() != rank ||
      out_dims.size() != rank) {
    return unsupported(
        "cuda: Conv runs 1-D and 2-D convolutions, got X of "
        "rank {}",
        rank);
  }
  const size_t spatial = rank - 2;
  auto axis_value = [&](const std::vector<int64_t>& values, size_t i,
                        int64_t fallback) {
    return values.empty() ? fallback : values[i];
  };
  if ((!strides.empty() && strides.size() != spatial) ||
      (!dilations.empty() && dilations.size() != spatial) ||
      (!pads.empty() && pads.size() != 2 * spatial) || group < 1 ||
      w_dims[0] % group != 0) {
    return invalid_argument("cuda: Conv attributes do not fit rank {}", rank);
  }
  ConvShape s;
  s.batch = x_dims[0];
  s.in_channels = x_dims[1];
  s.out_channels = w_dims[0];
  s.group_channels = w_dims[1];
  s.outputs_per_group = w_dims[0] / group;
  if (s.group_channels * group != s.in_channels) {
    return invalid_argument(
        "cuda: Conv W has {} channels per group, X {} in "
        "{} groups",
        s.group_channels, s.in_channels, group);
  }
  // Spatial axis i of the (h, w) pair: 1-D uses w only.
  int64_t* in[2] = {&s.in_h, &s.in_w};
  int64_t* out[2] = {&s.out_h, &s.out_w};
  int64_t* kernel[2] = {&s.k_h, &s.k_w};
  int64_t* stride[2] = {&s.stride_h, &s.stride_w};
  int64_t* dilation[2] = {&s.dil_h, &s.dil_w};
  int64_t* pad[2] = {&s.pad_h, &s.pad_w};
  for (size_t i = 0; i < spatial; ++i) {
    const size_t slot = spatial == 1 ? 1 : i;
    *in[slot] = x_dims[2 + i];
    *out[slot] = out_dims[2 + i];
    *kernel[slot] = w_dims[2 + i];
    *stride[slot] = axis_value(strides, i, 1);
    *dilation[slot] = axis_value(dilations, i, 1);
    int64_t begin = axis_value(pads, i, 0);
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t extent = (*kernel[slot] - 1) * *dilation[slot] + 1;
      const int64_t total = std::max<int64_t>(
          0, (*out[slot] - 1) * *stride[slot] + extent - *in[slot]);
      begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else if (auto_pad == "VALID") {
      begin = 0;
    }
    *pad[slot] = begin;
  }
  return s;
}

}  // namespace seqrt::cuda
