// Symbolic shape arithmetic. Exports with dynamic axes compute Reshape and
// Expand shapes at run time (Shape -> Gather -> Unsqueeze -> Concat), which
// op inference sees as unknown values, so every later dim is unknown and no
// fusion can check a pattern. This pass tracks the contents of such small
// integer tensors as dims (fixed or named symbols), fills in the output
// shapes of Reshape, Expand and ConstantOfShape from them, and re-runs each
// node's inference in the same sweep so the dims reach the nodes after.
// Only unknown dims are filled, and only with what the contents prove.
#include <map>
#include <vector>

#include "compiler/infer/infer_graph.h"
#include "compiler/passes/match.h"
#include "compiler/passes/passes.h"
#include "ops/registry.h"

namespace seqrt {
namespace {

// One element of a tracked integer tensor: a number (negative ones too:
// Reshape's -1) or a dim of a shape, which may be a named symbol.
struct Entry {
  std::optional<int64_t> number;
  Dim dim;  // used when number is absent: a symbol, or unknown

  static Entry of(const Dim& dim) {
    return dim.is_fixed() ? Entry{dim.value(), Dim()}
                          : Entry{std::nullopt, dim};
  }
  // The dim this entry gives a shape; unknown for negative numbers.
  Dim as_dim() const {
    if (!number) return dim;
    return *number >= 0 ? Dim(*number) : Dim();
  }
  bool same_as(const Entry& other) const {
    return number ? number == other.number
                  : !other.number && dim.is_symbol() && dim == other.dim;
  }
};
using DimList = std::vector<Entry>;

// Contents longer than any rank worth tracking are left alone.
constexpr int64_t kMaxTrackedElements = 16;

class ShapeValues {
 public:
  explicit ShapeValues(const Graph& graph) : graph_(graph) {}

  // The contents of an integer tensor of rank <= 1, when known.
  const DimList* find(ValueId id) {
    if (id == kNoValue) return nullptr;
    auto it = known_.find(id);
    if (it != known_.end()) return &it->second;
    const Tensor* tensor = graph_.constant(id);
    if (tensor == nullptr || tensor->rank() > 1 ||
        tensor->num_elements() > kMaxTrackedElements ||
        !(is_integer(tensor->dtype()) || tensor->dtype() == DType::kBool)) {
      return nullptr;
    }
    DimList entries;
    for (int64_t i = 0; i < tensor->num_elements(); ++i) {
      entries.push_back(Entry{tensor->element_i64(i), Dim()});
    }
    return &(known_[id] = entries);
  }

  void set(ValueId id, DimList entries) { known_[id] = std::move(entries); }

 private:
  const Graph& graph_;
  std::map<ValueId, DimList> known_;
};

DimList entries_of(const Shape& shape) {
  DimList entries;
  for (const Dim& dim : shape.dims()) entries.push_back(Entry::of(dim));
  return entries;
}

std::optional<DimList> gather(const DimList& data, const Tensor& indices) {
  DimList out;
  int64_t size = static_cast<int64_t>(data.size());
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    int64_t index = indices.element_i64(i);
    if (index < -size || index >= size) return std::nullopt;
    out.push_back(data[static_cast<size_t>(index < 0 ? index + size : index)]);
  }
  return out;
}

// Equal(a, b) elementwise, when it can be told: a dim is never negative.
std::optional<DimList> equal(const DimList& a, const DimList& b) {
  if (a.size() != b.size()) return std::nullopt;
  DimList out;
  for (size_t i = 0; i < a.size(); ++i) {
    bool negative =
        (a[i].number && *a[i].number < 0) || (b[i].number && *b[i].number < 0);
    if (a[i].number && b[i].number) {
      out.push_back(Entry{int64_t{*a[i].number == *b[i].number}, Dim()});
    } else if (a[i].same_as(b[i])) {
      out.push_back(Entry{int64_t{1}, Dim()});
    } else if (negative && (a[i].dim.is_symbol() || b[i].dim.is_symbol())) {
      out.push_back(Entry{int64_t{0}, Dim()});
    } else {
      return std::nullopt;
    }
  }
  return out;
}

std::optional<DimList> where(const DimList& cond, const DimList& a,
                             const DimList& b) {
  if (cond.size() != a.size() || a.size() != b.size()) return std::nullopt;
  DimList out;
  for (size_t i = 0; i < cond.size(); ++i) {
    if (!cond[i].number) return std::nullopt;
    out.push_back(*cond[i].number != 0 ? a[i] : b[i]);
  }
  return out;
}

// Add/Sub/Mul/Div of two contents, elementwise with a one-element side
// broadcast. Numbers are computed; a symbol survives only x*1, x+0, x-0
// and x/1; anything else is an unknown entry.
std::optional<DimList> arithmetic(const std::string& op, const DimList& a,
                                  const DimList& b) {
  if (a.size() != b.size() && a.size() != 1 && b.size() != 1) {
    return std::nullopt;
  }
  size_t size = std::max(a.size(), b.size());
  DimList out;
  for (size_t i = 0; i < size; ++i) {
    const Entry& x = a[a.size() == 1 ? 0 : i];
    const Entry& y = b[b.size() == 1 ? 0 : i];
    if (x.number && y.number) {
      int64_t u = *x.number;
      int64_t v = *y.number;
      if (op == "Div" && v == 0) return std::nullopt;
      int64_t r = op == "Add"   ? u + v
                  : op == "Sub" ? u - v
                  : op == "Mul" ? u * v
                                : u / v;
      out.push_back(Entry{r, Dim()});
    } else if (y.number && ((*y.number == 1 && (op == "Mul" || op == "Div")) ||
                            (*y.number == 0 && (op == "Add" || op == "Sub")))) {
      out.push_back(x);
    } else if (x.number && ((*x.number == 1 && op == "Mul") ||
                            (*x.number == 0 && op == "Add"))) {
      out.push_back(y);
    } else {
      out.push_back(Entry{});
    }
  }
  return out;
}

// The contents of `node`'s first output from its inputs' contents.
std::optional<DimList> evaluate(const Graph& graph, const Node& node,
                                ShapeValues& values) {
  auto in = [&](size_t i) {
    return i < node.inputs.size() ? values.find(node.inputs[i]) : nullptr;
  };
  if (node.op == "Shape") {
    const std::optional<Shape>& shape = graph.value(node.inputs[0]).shape;
    if (!shape || node.attr("start") != nullptr ||
        node.attr("end") != nullptr) {
      return std::nullopt;
    }
    return entries_of(*shape);
  }
  const std::optional<Shape>& out_shape = graph.value(node.outputs[0]).shape;
  if ((node.op == "Unsqueeze" || node.op == "Squeeze" || node.op == "Cast" ||
       node.op == "Identity") &&
      in(0) != nullptr && in(0)->size() <= 1 && out_shape &&
      out_shape->rank() <= 1) {
    return *in(0);  // a scalar and its one-element vector hold the same
  }
  if ((node.op == "Reshape" || node.op == "Cast" || node.op == "Identity") &&
      in(0) != nullptr && out_shape && out_shape->rank() == 1) {
    return *in(0);  // the same elements in the same order
  }
  if (node.op == "Gather" && in(0) != nullptr &&
      int_attr(node, "axis", 0) == 0 && graph.constant(node.inputs[1])) {
    return gather(*in(0), *graph.constant(node.inputs[1]));
  }
  if (node.op == "Concat" && int_attr(node, "axis", 0) == 0) {
    DimList out;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (in(i) == nullptr) return std::nullopt;
      out.insert(out.end(), in(i)->begin(), in(i)->end());
    }
    return out;
  }
  bool binary = node.op == "Add" || node.op == "Sub" || node.op == "Mul" ||
                node.op == "Div";
  if (binary && in(0) != nullptr && in(1) != nullptr &&
      is_integer(graph.value(node.outputs[0]).dtype)) {
    return arithmetic(node.op, *in(0), *in(1));
  }
  if (node.op == "Equal" && in(0) != nullptr && in(1) != nullptr) {
    return equal(*in(0), *in(1));
  }
  if (node.op == "Where" && in(0) != nullptr && in(1) != nullptr &&
      in(2) != nullptr) {
    return where(*in(0), *in(1), *in(2));
  }
  return std::nullopt;
}

// Reshape's output dims from its shape contents: 0 copies the input dim
// (allowzero 0), -1 stays unknown unless every other dim is fixed.
std::optional<Shape> reshape_shape(const Node& node, const Shape* input,
                                   const DimList& target) {
  if (int_attr(node, "allowzero", 0) != 0) return std::nullopt;
  Shape out{std::vector<Dim>(target.size())};
  int unknown_at = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    const std::optional<int64_t>& number = target[i].number;
    if (number && *number == 0) {
      if (input == nullptr || i >= input->rank()) return std::nullopt;
      out[i] = (*input)[i];
    } else if (number && *number == -1) {
      if (unknown_at >= 0) return std::nullopt;
      unknown_at = static_cast<int>(i);
    } else if (number && *number < 0) {
      return std::nullopt;
    } else {
      out[i] = target[i].as_dim();
    }
  }
  if (unknown_at < 0 || input == nullptr || !input->is_fixed()) return out;
  int64_t total = 1;
  for (int64_t d : input->fixed_dims()) total *= d;
  int64_t known = 1;
  for (size_t i = 0; i < out.rank(); ++i) {
    if (static_cast<int>(i) == unknown_at) continue;
    if (!out[i].is_fixed() || out[i].value() == 0) return out;
    known *= out[i].value();
  }
  if (total % known == 0) out[unknown_at] = Dim(total / known);
  return out;
}

// Expand's output: the two shapes broadcast, where the result is certain.
std::optional<Shape> expand_shape(const Shape* input, const DimList& target) {
  if (input == nullptr) return std::nullopt;
  size_t rank = std::max(input->rank(), target.size());
  Shape out{std::vector<Dim>(rank)};
  for (size_t i = 0; i < rank; ++i) {
    size_t from_end = rank - i;
    Dim a =
        from_end <= input->rank() ? (*input)[input->rank() - from_end] : Dim(1);
    const Entry* entry =
        from_end <= target.size() ? &target[target.size() - from_end] : nullptr;
    if (entry != nullptr && entry->number && *entry->number < 0) {
      return std::nullopt;
    }
    Dim b = entry != nullptr ? entry->as_dim() : Dim(1);
    if (a == b || b == Dim(1)) {
      out[i] = a;
    } else if (a == Dim(1)) {
      out[i] = b;
    }  // else unknown: two different symbols, or a symbol and a size
  }
  return out;
}

// Fills the unknown dims of `value` from `found`; true when any changed.
bool refine(Value& value, const std::optional<Shape>& found) {
  if (!found) return false;
  if (!value.shape) {
    value.shape = found;
    return true;
  }
  if (value.shape->rank() != found->rank()) return false;
  bool changed = false;
  for (size_t i = 0; i < found->rank(); ++i) {
    if (value.shape->dims()[i].is_unknown() && !(*found)[i].is_unknown()) {
      value.shape->dims()[i] = (*found)[i];
      changed = true;
    }
  }
  return changed;
}

// The node's own inference on the current types, to carry refined dims on.
void reinfer(Graph& graph, const Node& node) {
  const OpSchema* schema = OpRegistry::global().find(node.domain, node.op);
  if (schema == nullptr) return;
  for (const auto& [name, attr] : node.attrs) {
    if (attr.type() == AttrType::kGraph) return;  // infer_graph types these
  }
  std::vector<ValueInfo> inputs;
  for (ValueId id : node.inputs) {
    if (id == kNoValue) {
      inputs.emplace_back();
      continue;
    }
    const Value& value = graph.value(id);
    inputs.push_back(ValueInfo{value.dtype, value.shape, graph.constant(id)});
  }
  InferContext ctx(node, *schema, std::move(inputs));
  if (!schema->infer(ctx).is_ok()) return;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == kNoValue) continue;
    refine(graph.value(node.outputs[i]), ctx.outputs()[i].shape);
  }
}

Result<bool> infer_symbolic(Graph& graph) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<int> order, graph.topological_order());
  ShapeValues values(graph);
  bool changed = false;
  for (int n : order) {
    const Node& node = graph.nodes[n];
    if (!node.domain.empty() || node.outputs.empty() ||
        node.outputs[0] == kNoValue) {
      continue;
    }
    std::optional<Shape> before = graph.value(node.outputs[0]).shape;
    reinfer(graph, node);
    Value& out = graph.value(node.outputs[0]);
    const DimList* target =
        node.inputs.size() > 1 ? values.find(node.inputs[1]) : nullptr;
    const Shape* input = node.inputs.empty() || node.inputs[0] == kNoValue
                             ? nullptr
                             : (graph.value(node.inputs[0]).shape
                                    ? &*graph.value(node.inputs[0]).shape
                                    : nullptr);
    if (node.op == "Reshape" && target != nullptr) {
      refine(out, reshape_shape(node, input, *target));
    } else if (node.op == "Expand" && target != nullptr) {
      refine(out, expand_shape(input, *target));
    } else if (node.op == "ConstantOfShape" && values.find(node.inputs[0])) {
      Shape shape;
      for (const Entry& entry : *values.find(node.inputs[0])) {
        shape.dims().push_back(entry.as_dim());
      }
      refine(out, shape);
    }
    changed = changed || out.shape != before;
    std::optional<DimList> contents = evaluate(graph, node, values);
    if (contents && contents->size() <= kMaxTrackedElements) {
      values.set(node.outputs[0], std::move(*contents));
    }
  }
  return changed;
}

}  // namespace

Pass infer_symbolic_shapes_pass() {
  return {"infer_symbolic_shapes", infer_symbolic};
}

}  // namespace seqrt
