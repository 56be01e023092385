#include "compiler/passes/recurrence_factors.h"

#include <numeric>

namespace seqrt {
namespace {

// Pads `f` with leading axes of size 1 up to `rank` axes, as broadcasting
// aligns operands; false when it has more.
bool align(Factor& f, size_t rank) {
  if (f.dims.size() > rank) return false;
  size_t pad = rank - f.dims.size();
  f.dims.insert(f.dims.begin(), pad, 1);
  f.origin.insert(f.origin.begin(), pad, -1);
  return true;
}

std::vector<size_t> axes_above_one(const std::vector<int64_t>& dims) {
  std::vector<size_t> axes;
  for (size_t j = 0; j < dims.size(); ++j) {
    if (dims[j] != 1) axes.push_back(j);
  }
  return axes;
}

// Whether a reshape from `in` to `out` only adds or drops axes of size 1:
// the other dims keep their order, so the data does not move.
bool keeps_order(const std::vector<int64_t>& in,
                 const std::vector<int64_t>& out) {
  std::vector<size_t> a = axes_above_one(in);
  std::vector<size_t> b = axes_above_one(out);
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    if (in[a[k]] != out[b[k]]) return false;
  }
  return true;
}

}  // namespace

// Exports add no-op Casts (to the dtype a value has) and pick the only
// element of an axis of size 1 with a Gather: both are views too.
bool ProductReader::is_order_keeping_view(const Node& node) const {
  if (!node.domain.empty() || node.inputs.empty() ||
      node.inputs[0] == kNoValue || node.outputs.size() != 1) {
    return false;
  }
  const std::string& op = node.op;
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" ||
      op == "Identity") {
    return true;
  }
  if (op == "Cast") {
    const Attribute* to = node.attr("to");
    return to != nullptr && to->type() == AttrType::kInt &&
           graph_.value(node.outputs[0]).dtype ==
               graph_.value(node.inputs[0]).dtype;
  }
  if (op == "Gather" && node.inputs.size() == 2) {
    std::optional<std::vector<int64_t>> in = dims(node.inputs[0]);
    const Tensor* index = graph_.constant(node.inputs[1]);
    const Attribute* attr = node.attr("axis");
    int64_t axis = attr != nullptr ? attr->as_int() : 0;
    if (!in || index == nullptr || !index->dims().empty() ||
        !is_integer(index->dtype())) {
      return false;
    }
    if (axis < 0) axis += static_cast<int64_t>(in->size());
    const int64_t at = index->element_i64(0);
    return axis >= 0 && axis < static_cast<int64_t>(in->size()) &&
           (*in)[axis] == 1 && (at == 0 || at == -1);
  }
  return false;
}

const Node* ProductReader::producer(ValueId id, const char* op) const {
  int n = producers_[id];
  if (n < 0) return nullptr;
  const Node& node = graph_.nodes[n];
  return node.op == op && node.domain.empty() ? &node : nullptr;
}

std::optional<std::vector<int64_t>> ProductReader::dims(ValueId id) const {
  const std::optional<Shape>& shape = graph_.value(id).shape;
  if (!shape || !shape->is_fixed()) return std::nullopt;
  return shape->fixed_dims();
}

std::optional<std::vector<int64_t>> ProductReader::ints(ValueId id) const {
  const Tensor* tensor = graph_.constant(id);
  if (const Node* node = producer(id, "Constant")) {
    const Attribute* value = node->attr("value");
    if (value != nullptr && value->type() == AttrType::kTensor) {
      tensor = &value->as_tensor();
    }
  }
  if (tensor == nullptr || !is_integer(tensor->dtype())) return std::nullopt;
  std::vector<int64_t> values;
  for (int64_t i = 0; i < tensor->num_elements(); ++i) {
    values.push_back(tensor->element_i64(i));
  }
  return values;
}

std::optional<std::vector<Factor>> ProductReader::factors(ValueId value,
                                                          int depth) const {
  std::optional<std::vector<int64_t>> out = dims(value);
  if (!out || depth > kMaxDepth) return std::nullopt;
  int n = producers_[value];
  if (n >= 0 && graph_.nodes[n].domain.empty()) {
    const Node& node = graph_.nodes[n];
    bool outer_product = false;
    if (node.op == "MatMul" && node.inputs.size() == 2) {
      std::optional<std::vector<int64_t>> a = dims(node.inputs[0]);
      std::optional<std::vector<int64_t>> b = dims(node.inputs[1]);
      // (…,m,1)·(…,1,n) is the broadcast product of the two.
      outer_product = a && b && a->size() >= 2 && b->size() >= 2 &&
                      a->back() == 1 && (*b)[b->size() - 2] == 1;
    }
    if ((node.op == "Mul" && node.inputs.size() == 2) || outer_product) {
      std::vector<Factor> all;
      for (ValueId operand : node.inputs) {
        std::optional<std::vector<Factor>> part = factors(operand, depth + 1);
        if (!part || all.size() + part->size() > kMaxFactors) {
          return std::nullopt;
        }
        for (Factor& f : *part) {
          if (!align(f, out->size())) return std::nullopt;
          all.push_back(std::move(f));
        }
      }
      return all;
    }
    if (std::optional<std::vector<Factor>> viewed =
            view_factors(node, value, depth)) {
      return viewed;
    }
  }
  Factor leaf{value, *out, std::vector<int>(out->size())};
  std::iota(leaf.origin.begin(), leaf.origin.end(), 0);
  return std::vector<Factor>{leaf};
}

std::optional<std::vector<Factor>> ProductReader::view_factors(
    const Node& node, ValueId value, int depth) const {
  if (node.inputs.empty() || node.inputs[0] == kNoValue) return std::nullopt;
  std::optional<std::vector<int64_t>> in = dims(node.inputs[0]);
  std::optional<std::vector<int64_t>> out = dims(value);
  if (!in || !out) return std::nullopt;
  std::vector<int64_t> perm;
  if (node.op == "Transpose") {
    const Attribute* attr = node.attr("perm");
    if (attr != nullptr) perm = attr->as_ints();
    if (attr == nullptr) {
      for (size_t j = in->size(); j-- > 0;) perm.push_back(j);
    }
    if (perm.size() != in->size()) return std::nullopt;
  } else if (!is_order_keeping_view(node) || !keeps_order(*in, *out)) {
    return std::nullopt;
  }
  std::optional<std::vector<Factor>> inner = factors(node.inputs[0], depth + 1);
  if (!inner) return std::nullopt;
  std::vector<size_t> from = axes_above_one(*in);
  std::vector<size_t> to = axes_above_one(*out);
  for (Factor& f : *inner) {
    if (!align(f, in->size())) return std::nullopt;
    Factor moved{f.source, std::vector<int64_t>(out->size(), 1),
                 std::vector<int>(out->size(), -1)};
    if (!perm.empty()) {
      for (size_t j = 0; j < perm.size(); ++j) {
        if (perm[j] < 0 || perm[j] >= static_cast<int64_t>(in->size())) {
          return std::nullopt;
        }
        moved.dims[j] = f.dims[perm[j]];
        moved.origin[j] = f.origin[perm[j]];
      }
    } else {
      // Axes of size 1 of the input hold nothing a broadcast could see.
      for (size_t k = 0; k < from.size(); ++k) {
        moved.dims[to[k]] = f.dims[from[k]];
        moved.origin[to[k]] = f.origin[from[k]];
      }
    }
    f = std::move(moved);
  }
  return inner;
}

ValueId ProductReader::before_views(ValueId value) const {
  for (;;) {
    int n = producers_[value];
    if (n < 0) return value;
    const Node& node = graph_.nodes[n];
    std::optional<std::vector<int64_t>> out = dims(value);
    if (!is_order_keeping_view(node) || !out) {
      return value;
    }
    std::optional<std::vector<int64_t>> in = dims(node.inputs[0]);
    if (!in || !keeps_order(*in, *out)) return value;
    value = node.inputs[0];
  }
}

bool ProductReader::placed(const Factor& f,
                           const std::vector<int>& placement) const {
  std::optional<std::vector<int64_t>> source = dims(f.source);
  if (!source || source->size() != placement.size()) return false;
  for (size_t s = 0; s < source->size(); ++s) {
    if ((*source)[s] == 1) continue;
    const int axis = placement[s];
    if (axis < 0 || axis >= static_cast<int>(f.origin.size()) ||
        f.origin[axis] != static_cast<int>(s)) {
      return false;
    }
  }
  return true;
}

}  // namespace seqrt
