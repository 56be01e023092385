#include "graph/passes/match.h"

#include <algorithm>
#include <cmath>

namespace seqrt {

int Matcher::producer(ValueId id, const std::string& op) const {
  if (id == kNoValue) return -1;
  int n = uses_.producer[id];
  if (n < 0) return -1;
  const Node& found = graph_.nodes[n];
  return found.op == op && found.domain == kOnnxDomain ? n : -1;
}

std::optional<double> Matcher::scalar(ValueId id) const {
  const Tensor* tensor = id == kNoValue ? nullptr : graph_.constant(id);
  if (tensor == nullptr || tensor->num_elements() != 1 ||
      tensor->dtype() == DType::kBool) {
    return std::nullopt;
  }
  return tensor->element_f64(0);
}

std::optional<std::vector<int64_t>> Matcher::ints(ValueId id) const {
  const Tensor* tensor = id == kNoValue ? nullptr : graph_.constant(id);
  if (tensor == nullptr ||
      (tensor->dtype() != DType::kI64 && tensor->dtype() != DType::kI32)) {
    return std::nullopt;
  }
  std::vector<int64_t> values;
  for (int64_t i = 0; i < tensor->num_elements(); ++i) {
    values.push_back(tensor->element_i64(i));
  }
  return values;
}

const Shape* Matcher::shape(ValueId id) const {
  const std::optional<Shape>& shape = graph_.value(id).shape;
  return shape ? &*shape : nullptr;
}

std::optional<std::pair<ValueId, double>> Matcher::with_scalar(
    const Node& node, bool scalar_first) const {
  if (node.inputs.size() != 2 || !node.attrs.empty()) return std::nullopt;
  size_t scalar_pos = scalar_first ? 0 : 1;
  std::optional<double> value = scalar(node.inputs[scalar_pos]);
  if (!value && node.op != "Sub" && node.op != "Div") {
    scalar_pos = 1 - scalar_pos;  // Add and Mul commute
    value = scalar(node.inputs[scalar_pos]);
  }
  if (!value) return std::nullopt;
  ValueId other = node.inputs[1 - scalar_pos];
  const Shape* other_shape = shape(other);
  const Tensor* constant = graph_.constant(node.inputs[scalar_pos]);
  if (other_shape == nullptr || constant->rank() > other_shape->rank() ||
      constant->dtype() != dtype(other)) {
    return std::nullopt;
  }
  return std::make_pair(other, *value);
}

bool Matcher::is_private(const std::set<int>& nodes,
                         const std::set<ValueId>& kept) const {
  for (int n : nodes) {
    for (ValueId id : graph_.nodes[n].outputs) {
      if (id == kNoValue || kept.count(id) != 0) continue;
      if (uses_.is_output[id]) return false;
      for (int reader : uses_.consumers[id]) {
        if (nodes.count(reader) == 0) return false;
      }
    }
  }
  return true;
}

std::optional<int64_t> normalize_axis(int64_t axis, size_t rank) {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) return std::nullopt;
  return axis < 0 ? axis + r : axis;
}

bool has_only_attrs(const Node& node, const std::set<std::string>& names) {
  for (const auto& [name, attr] : node.attrs) {
    if (names.count(name) == 0) return false;
  }
  return true;
}

int64_t int_attr(const Node& node, const std::string& name, int64_t fallback) {
  const Attribute* attr = node.attr(name);
  return attr != nullptr && attr->type() == AttrType::kInt ? attr->as_int()
                                                           : fallback;
}

bool near(double value, double expected) {
  return std::fabs(value - expected) <= 1e-6 * std::fabs(expected) + 1e-12;
}

std::optional<int64_t> trailing_mean_axis(const Matcher& m, const Node& node) {
  if (node.op != "ReduceMean" || node.inputs.size() != 2 ||
      !has_only_attrs(node, {"keepdims", "noop_with_empty_axes"}) ||
      int_attr(node, "keepdims", 1) != 1 ||
      int_attr(node, "noop_with_empty_axes", 0) != 0) {
    return std::nullopt;
  }
  const Shape* shape = m.shape(node.inputs[0]);
  std::optional<std::vector<int64_t>> axes = m.ints(node.inputs[1]);
  if (shape == nullptr || !axes || axes->empty()) return std::nullopt;
  std::set<int64_t> normalized;
  for (int64_t axis : *axes) {
    std::optional<int64_t> a = normalize_axis(axis, shape->rank());
    if (!a) return std::nullopt;
    normalized.insert(*a);
  }
  int64_t first = static_cast<int64_t>(shape->rank()) -
                  static_cast<int64_t>(normalized.size());
  if (normalized.size() != axes->size() || *normalized.begin() != first) {
    return std::nullopt;  // not exactly the trailing axes
  }
  return first;
}

std::optional<ValueId> broadcast_operand(const Matcher& m, const Node& mul,
                                         const std::string& op, ValueId x) {
  if (mul.op != op || !mul.domain.empty() || mul.inputs.size() != 2 ||
      !mul.attrs.empty()) {
    return std::nullopt;
  }
  ValueId other = mul.inputs[0] == x ? mul.inputs[1] : mul.inputs[0];
  if ((mul.inputs[0] != x && mul.inputs[1] != x) || other == x) {
    return std::nullopt;
  }
  const Shape* x_shape = m.shape(x);
  const Shape* out_shape = m.shape(mul.outputs[0]);
  const Shape* other_shape = m.shape(other);
  if (x_shape == nullptr || out_shape == nullptr || other_shape == nullptr ||
      *x_shape != *out_shape || other_shape->rank() > x_shape->rank() ||
      m.dtype(other) != m.dtype(x)) {
    return std::nullopt;
  }
  // A symbolic dim of `other` could broadcast x's 1 to more: only fixed
  // dims equal to x's or 1 are safe.
  size_t offset = x_shape->rank() - other_shape->rank();
  for (size_t d = 0; d < other_shape->rank(); ++d) {
    const Dim& dim = (*other_shape)[d];
    const Dim& xd = (*x_shape)[offset + d];
    if (!(dim == xd || (dim.is_fixed() && dim.value() == 1))) {
      return std::nullopt;
    }
  }
  return other;
}

int sole_consumer(const Matcher& m, ValueId id) {
  const ValueUses& uses = m.uses();
  if (uses.is_output[id] || uses.consumers[id].size() != 1) return -1;
  int reader = uses.consumers[id][0];
  const std::vector<ValueId>& inputs = m.node(reader).inputs;
  // A reader that captures the value by name cannot be rewired.
  return std::find(inputs.begin(), inputs.end(), id) == inputs.end() ? -1
                                                                     : reader;
}

namespace {

Status apply(Graph& graph, Fusion fusion) {
  if (fusion.create_values) fusion.create_values(graph, fusion.add);
  for (Node& node : fusion.add) add_node(graph, std::move(node));
  return remove_nodes(graph, fusion.remove);
}

}  // namespace

Result<bool> apply_fusions(Graph& graph, const FusionMatcher& match) {
  bool changed = false;
  for (bool found = true; found;) {
    found = false;
    Matcher m(graph);
    for (size_t n = 0; n < graph.nodes.size() && !found; ++n) {
      std::optional<Fusion> fusion = match(m, static_cast<int>(n));
      if (!fusion) continue;
      SEQRT_RETURN_IF_ERROR(apply(graph, std::move(*fusion)));
      found = changed = true;
    }
  }
  SEQRT_ASSIGN_OR_RETURN(bool sub_changed,
                         rewrite_subgraphs(graph, [&](Graph& sub) {
                           return apply_fusions(sub, match);
                         }));
  return changed || sub_changed;
}

}  // namespace seqrt
