#include "compiler/passes/match.h"

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

// The rank of x for Shape(x) with no start/end attributes; nullopt else.
std::optional<int64_t> shape_of_rank(const Matcher& m, ValueId shape,
                                     ValueId& x) {
  const int n = m.producer(shape, "Shape");
  if (n < 0 || !m.node(n).attrs.empty()) return std::nullopt;
  x = m.node(n).inputs[0];
  const Shape* x_shape = m.shape(x);
  if (x_shape == nullptr) return std::nullopt;
  return static_cast<int64_t>(x_shape->rank());
}

// Element a of Shape(x) as a one-element Slice of it: x and a.
std::optional<ShapeDim> sliced_shape_dim(const Matcher& m, ValueId id) {
  const int n = m.producer(id, "Slice");
  if (n < 0) return std::nullopt;
  const Node& slice = m.node(n);
  ShapeDim dim;
  std::optional<int64_t> rank = shape_of_rank(m, slice.inputs[0], dim.value);
  const auto starts = m.ints(slice.inputs[1]);
  const auto ends = m.ints(slice.inputs[2]);
  auto optional_input =
      [&](size_t i, int64_t fallback) -> std::optional<std::vector<int64_t>> {
    if (i < slice.inputs.size() && slice.inputs[i] != kNoValue) {
      return m.ints(slice.inputs[i]);
    }
    return std::vector<int64_t>{fallback};
  };
  const auto axes = optional_input(3, 0);
  const auto steps = optional_input(4, 1);
  const bool one_axis = axes && (*axes == std::vector<int64_t>{0} ||
                                 *axes == std::vector<int64_t>{-1});
  if (!rank || !starts || !ends || !one_axis || !steps || starts->size() != 1 ||
      ends->size() != 1 || *steps != std::vector<int64_t>{1}) {
    return std::nullopt;
  }
  const std::optional<int64_t> start =
      normalize_axis((*starts)[0], static_cast<size_t>(*rank));
  int64_t end = (*ends)[0] < 0 ? (*ends)[0] + *rank : (*ends)[0];
  if (!start || std::min(end, *rank) != *start + 1) return std::nullopt;
  dim.axis = *start;
  return dim;
}

}  // namespace

std::optional<ShapeDim> shape_dim(const Matcher& m, ValueId id) {
  if (m.dtype(id) != DType::kI64 && m.dtype(id) != DType::kI32) {
    return std::nullopt;
  }
  for (int cast = m.producer(id, "Cast"); cast >= 0;
       cast = m.producer(id, "Cast")) {
    id = m.node(cast).inputs[0];
    if (m.dtype(id) != DType::kI64 && m.dtype(id) != DType::kI32) {
      return std::nullopt;
    }
  }
  const Shape* scalar = m.shape(id);
  if (scalar == nullptr || scalar->rank() != 0) return std::nullopt;
  if (const int gather = m.producer(id, "Gather"); gather >= 0) {
    const Node& node = m.node(gather);
    ShapeDim dim;
    std::optional<int64_t> rank = shape_of_rank(m, node.inputs[0], dim.value);
    const std::optional<double> index = m.scalar(node.inputs[1]);
    if (!rank || !index || int_attr(node, "axis", 0) != 0 ||
        !has_only_attrs(node, {"axis"}) || m.shape(node.inputs[1]) == nullptr ||
        m.shape(node.inputs[1])->rank() != 0) {
      return std::nullopt;
    }
    const std::optional<int64_t> axis = normalize_axis(
        static_cast<int64_t>(*index), static_cast<size_t>(*rank));
    if (!axis) return std::nullopt;
    dim.axis = *axis;
    return dim;
  }
  const int squeeze = m.producer(id, "Squeeze");
  if (squeeze < 0 || !m.node(squeeze).attrs.empty()) return std::nullopt;
  const Node& node = m.node(squeeze);
  if (node.inputs.size() > 1 && node.inputs[1] != kNoValue) {
    const auto axes = m.ints(node.inputs[1]);
    if (!axes || (*axes != std::vector<int64_t>{0} &&
                  *axes != std::vector<int64_t>{-1})) {
      return std::nullopt;
    }
  }
  return sliced_shape_dim(m, node.inputs[0]);
}

namespace {

std::optional<double> computed_scalar_at(const Matcher& m, ValueId id,
                                         int depth) {
  // Deeper chains than torch's exports are left alone.
  constexpr int kMaxDepth = 8;
  const Shape* shape = id == kNoValue ? nullptr : m.shape(id);
  if (depth > kMaxDepth || shape == nullptr ||
      std::any_of(shape->dims().begin(), shape->dims().end(),
                  [](const Dim& dim) { return dim != Dim(1); })) {
    return std::nullopt;
  }
  if (const std::optional<double> value = m.scalar(id)) return value;
  if (const std::optional<ShapeDim> dim = shape_dim(m, id)) {
    const Dim& size = (*m.shape(dim->value))[dim->axis];
    if (!size.is_fixed()) return std::nullopt;
    return static_cast<double>(size.value());
  }
  const int n = m.uses().producer[id];
  if (n < 0 || m.node(n).domain != kOnnxDomain) return std::nullopt;
  const Node& node = m.node(n);
  if (node.op == "ConstantOfShape") {
    const Attribute* value = node.attr("value");
    if (value == nullptr) return 0.0;
    if (value->type() != AttrType::kTensor ||
        value->as_tensor().num_elements() != 1 ||
        value->as_tensor().dtype() == DType::kBool) {
      return std::nullopt;
    }
    return value->as_tensor().element_f64(0);
  }
  std::vector<double> args;
  for (ValueId input : node.inputs) {
    const std::optional<double> arg = computed_scalar_at(m, input, depth + 1);
    if (!arg) return std::nullopt;
    args.push_back(*arg);
  }
  const std::string& op = node.op;
  if (args.size() == 1 && op == "Cast" && is_float(m.dtype(id))) return args[0];
  if (args.size() == 1 && op == "Sqrt") return std::sqrt(args[0]);
  if (args.size() != 2 || !node.attrs.empty()) return std::nullopt;
  if (op == "Add") return args[0] + args[1];
  if (op == "Sub") return args[0] - args[1];
  if (op == "Mul") return args[0] * args[1];
  if (op == "Div" && args[1] != 0 && is_float(m.dtype(id))) {
    return args[0] / args[1];
  }
  if (op == "Pow") return std::pow(args[0], args[1]);
  return std::nullopt;
}

}  // namespace

std::optional<double> computed_scalar(const Matcher& m, ValueId id) {
  return computed_scalar_at(m, id, 0);
}

namespace {

// Whether an input of the new nodes is computed from a removed node: the
// rewrite would then read a value that it replaces (as a mask computed
// from the Shape of a KV-cache Concat that the fused node now produces),
// a cycle. Such a fusion is not applied.
bool reads_what_it_removes(const Matcher& m, const Fusion& fusion) {
  std::vector<ValueId> pending;
  for (const Node& node : fusion.add) {
    for (ValueId id : node.inputs) {
      if (id != kNoValue) pending.push_back(id);
    }
  }
  std::set<int> seen;
  while (!pending.empty()) {
    const int producer = m.uses().producer[pending.back()];
    pending.pop_back();
    if (producer < 0 || !seen.insert(producer).second) continue;
    if (fusion.remove.count(producer) != 0) return true;
    for (ValueId id : m.node(producer).inputs) {
      if (id != kNoValue) pending.push_back(id);
    }
  }
  return false;
}

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
      if (!fusion || reads_what_it_removes(m, *fusion)) continue;
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
