#include "compiler/planner/slice_view.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace seqrt {
namespace {

// Input `index` of `node` as a list of integers when it is a constant.
std::optional<std::vector<int64_t>> constant_ints(const Graph& graph,
                                                  const Node& node,
                                                  size_t index) {
  if (index >= node.inputs.size() || node.inputs[index] == kNoValue) {
    return std::nullopt;
  }
  auto it = graph.constants.find(node.inputs[index]);
  if (it == graph.constants.end()) return std::nullopt;
  const Tensor& tensor = it->second;
  if (tensor.dtype() != DType::kI64 && tensor.dtype() != DType::kI32) {
    return std::nullopt;
  }
  std::vector<int64_t> ints(static_cast<size_t>(tensor.num_elements()));
  for (size_t i = 0; i < ints.size(); ++i) ints[i] = tensor.element_i64(i);
  return ints;
}

// The first kept index along an axis of `dim` elements, clamped as the
// reference Slice clamps it (ops/shape/slice.cc).
int64_t first_index(int64_t dim, int64_t start, int64_t step) {
  if (start < 0) start += dim;
  if (step > 0) return std::clamp<int64_t>(start, 0, dim);
  return std::clamp<int64_t>(start, 0, std::max<int64_t>(dim - 1, 0));
}

}  // namespace

std::optional<int64_t> slice_view_offset(const Graph& graph, const Node& node,
                                         const ValuePlan& in,
                                         const ValuePlan& out) {
  if (node.domain != kOnnxDomain || node.op != "Slice" || node.inputs.empty() ||
      node.inputs[0] == kNoValue || in.bytes <= 0 || out.bytes <= 0 ||
      in.dims.size() != out.dims.size() || in.dtype != out.dtype) {
    return std::nullopt;
  }
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  const auto starts = constant_ints(graph, node, 1);
  if (!starts || !constant_ints(graph, node, 2)) return std::nullopt;
  std::vector<int64_t> axes(starts->size());
  std::iota(axes.begin(), axes.end(), 0);
  std::vector<int64_t> steps(starts->size(), 1);
  if (node.inputs.size() > 3 && node.inputs[3] != kNoValue) {
    const auto given = constant_ints(graph, node, 3);
    if (!given || given->size() != axes.size()) return std::nullopt;
    axes = *given;
  }
  if (node.inputs.size() > 4 && node.inputs[4] != kNoValue) {
    const auto given = constant_ints(graph, node, 4);
    if (!given || given->size() != steps.size()) return std::nullopt;
    steps = *given;
  }
  // Per axis: the first kept index and the step (1 on axes not sliced).
  std::vector<int64_t> first(rank, 0);
  std::vector<int64_t> step_of(rank, 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank || steps[i] == 0) return std::nullopt;
    step_of[axis] = steps[i];
    first[axis] = first_index(in.dims[axis], (*starts)[i], steps[i]);
  }
  // Contiguous: an axis of more than one element goes forward by one, and
  // all axes after it are whole, so no gap opens between its elements.
  int64_t offset = 0;  // elements
  int64_t stride = 1;  // of the input, along `axis`
  bool inner_whole = true;
  for (int64_t axis = rank - 1; axis >= 0; --axis) {
    if (out.dims[axis] > 1 && (step_of[axis] != 1 || !inner_whole)) {
      return std::nullopt;
    }
    offset += first[axis] * stride;
    inner_whole = inner_whole && out.dims[axis] == in.dims[axis];
    stride *= in.dims[axis];
  }
  return offset * static_cast<int64_t>(dtype_size(in.dtype));
}

}  // namespace seqrt
