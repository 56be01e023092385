// Reading a recurrence's algebra off a loop body (lift_scan_recurrences):
// a value as a product of factors, each a value seen through views that
// only move its axes. Matching compares sources and axis placements, so
// commuted operands, any grouping of a product (delta·(u·B) or (delta·u)·B),
// Unsqueeze or Reshape for a broadcast, and Mul of views or MatMul over an
// inner dim of 1 (an outer product) all read the same.
#pragma once

#include <optional>
#include <vector>

#include "graph/graph.h"

namespace seqrt {

// One factor: `source` viewed with `dims`; origin[j] is the axis of the
// source that view axis j holds, -1 for an axis the views added (size 1).
struct Factor {
  ValueId source = kNoValue;
  std::vector<int64_t> dims;
  std::vector<int> origin;
};

class ProductReader {
 public:
  explicit ProductReader(const Graph& body)
      : graph_(body), producers_(body.producers()) {}

  const Graph& graph() const { return graph_; }
  // The node producing `id` when it is the ONNX-domain `op`, else nullptr.
  const Node* producer(ValueId id, const char* op) const;
  // The fixed dims of `id`; nullopt when its shape is not fully known.
  std::optional<std::vector<int64_t>> dims(ValueId id) const;
  // The elements of an integer constant (an initializer or a Constant
  // node's output): axes.
  std::optional<std::vector<int64_t>> ints(ValueId id) const;

  // The factors of `value`: through Mul (two operands), MatMul whose left
  // operand ends in a dim of 1 and whose right operand's second last dim is
  // 1, and the views Unsqueeze, Squeeze, Reshape that keep the order of the
  // dims other than 1 (and a Cast to the same dtype, a Gather of the only
  // element of an axis), and Transpose. Anything else is a factor of its own.
  // Each factor is aligned to `value`'s rank as broadcasting aligns it.
  // nullopt when a shape on the way is not fixed, or past kMaxFactors
  // factors or kMaxDepth nodes deep (a body from an untrusted file could
  // square a value forty times over).
  std::optional<std::vector<Factor>> factors(ValueId value) const {
    return factors(value, 0);
  }

  static constexpr size_t kMaxFactors = 8;
  static constexpr int kMaxDepth = 32;

  // `value` before the order-keeping views (Squeeze, Unsqueeze, Reshape, …)
  // that produce it.
  ValueId before_views(ValueId value) const;
  bool is_order_keeping_view(const Node& node) const;

  // Whether `f`'s source has `rank` axes and each of its axes of size > 1
  // lands on axis placement[axis] of the product (axes of size 1 may lie
  // anywhere: they broadcast).
  bool placed(const Factor& f, const std::vector<int>& placement) const;

 private:
  std::optional<std::vector<Factor>> factors(ValueId value, int depth) const;
  std::optional<std::vector<Factor>> view_factors(const Node& node,
                                                  ValueId value,
                                                  int depth) const;
  const Graph& graph_;
  std::vector<int> producers_;
};

}  // namespace seqrt
