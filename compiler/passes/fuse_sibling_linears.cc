// Two or more products of the same X with constant 2-D weights — ONNX
// MatMul(X, W_i), or seqrt::Linear(X, W_i, B_i?, activation) — become one
// node over the weights concatenated along N (the biases too, zeros where a
// sibling has none) and one Split on the last axis into the old outputs.
// Llama's q/k/v projections (GQA: different N_i) then read X once, in one
// larger GEMM. A MatMul counts as a Linear without bias or activation, so
// Whisper's biasless k_proj (left a MatMul by fuse_linear) joins its q_proj
// and v_proj. Siblings join when they share the weight dtype, K and the
// activation; the fused node is a MatMul when all of them were. A group
// whose concatenated weight would pass kMaxFoldedBytes stays as it is.
#include <algorithm>
#include <cstring>

#include "compiler/passes/match.h"
#include "compiler/passes/passes.h"

namespace seqrt {
namespace {

bool is_linear_dtype(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16;
}

// One product X·W (+ B) that may join a group.
struct Sibling {
  int node = -1;
  bool is_linear = false;     // seqrt::Linear, else ONNX MatMul
  std::string activation;     // "none" for MatMul and Linear's default
  const Tensor* w = nullptr;  // (K, N)
  const Tensor* b = nullptr;  // (N) or none
};

std::string linear_activation(const Node& node) {
  auto it = node.attrs.find("activation");
  if (it == node.attrs.end()) return "none";
  return it->second.type() == AttrType::kString ? it->second.as_string() : "";
}

// The node at `n` as a sibling: a product of its first input with a
// constant 2-D weight of that input's float dtype.
std::optional<Sibling> sibling_at(const Matcher& m, int n) {
  const Node& node = m.node(n);
  Sibling s;
  s.node = n;
  if (node.domain.empty() && node.op == "MatMul" && node.attrs.empty() &&
      node.inputs.size() == 2) {
    s.activation = "none";
  } else if (node.domain == kSeqrtDomain && node.op == "Linear" &&
             has_only_attrs(node, {"activation"}) &&
             (node.inputs.size() == 2 || node.inputs.size() == 3)) {
    s.is_linear = true;
    s.activation = linear_activation(node);
    if (s.activation.empty()) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (node.outputs.size() != 1) return std::nullopt;
  const ValueId x = node.inputs[0];
  if (node.inputs[1] == kNoValue) return std::nullopt;
  s.w = m.graph().constant(node.inputs[1]);
  const Shape* x_shape = x == kNoValue ? nullptr : m.shape(x);
  if (s.w == nullptr || s.w->rank() != 2 || x_shape == nullptr ||
      x_shape->rank() < 1 || !is_linear_dtype(s.w->dtype()) ||
      m.dtype(x) != s.w->dtype()) {
    return std::nullopt;
  }
  if (s.is_linear && node.inputs.size() == 3 && node.inputs[2] != kNoValue) {
    s.b = m.graph().constant(node.inputs[2]);
    if (s.b == nullptr || s.b->rank() != 1 || s.b->dim(0) != s.w->dim(1) ||
        s.b->dtype() != s.w->dtype()) {
      return std::nullopt;
    }
  }
  return s;
}

bool joins(const Sibling& first, const Sibling& other) {
  return other.activation == first.activation &&
         other.w->dtype() == first.w->dtype() &&
         other.w->dim(0) == first.w->dim(0);
}

// The siblings reading `x` that join `first`, in node order (first included).
std::vector<Sibling> group_of(const Matcher& m, const Sibling& first,
                              ValueId x) {
  std::vector<int> readers = m.uses().consumers[x];
  std::sort(readers.begin(), readers.end());
  std::vector<Sibling> group;
  for (int reader : readers) {
    if (m.node(reader).inputs[0] != x) continue;
    std::optional<Sibling> s = sibling_at(m, reader);
    if (s && joins(first, *s)) group.push_back(*s);
  }
  return group;
}

// The (K, ΣN) weight: each row the siblings' rows side by side.
std::optional<Tensor> concat_weights(const std::vector<Sibling>& group,
                                     int64_t total_n) {
  const Tensor& w0 = *group.front().w;
  Result<Tensor> fused = Tensor::allocate(w0.dtype(), {w0.dim(0), total_n});
  if (!fused.is_ok()) return std::nullopt;
  const size_t elem = dtype_size(w0.dtype());
  auto* out = static_cast<char*>(fused->mutable_data());
  for (int64_t k = 0; k < w0.dim(0); ++k) {
    for (const Sibling& s : group) {
      const size_t row = static_cast<size_t>(s.w->dim(1)) * elem;
      std::memcpy(out, static_cast<const char*>(s.w->data()) + k * row, row);
      out += row;
    }
  }
  return std::move(fused).value();
}

// The (ΣN) bias, zeros for the siblings without one (allocate zero-fills).
std::optional<Tensor> concat_biases(const std::vector<Sibling>& group,
                                    int64_t total_n) {
  const Tensor& w0 = *group.front().w;
  Result<Tensor> fused = Tensor::allocate(w0.dtype(), {total_n});
  if (!fused.is_ok()) return std::nullopt;
  auto* out = static_cast<char*>(fused->mutable_data());
  for (const Sibling& s : group) {
    if (s.b != nullptr) std::memcpy(out, s.b->data(), s.b->byte_size());
    out += s.w->dim(1) * dtype_size(w0.dtype());
  }
  return std::move(fused).value();
}

struct FusedConstants {
  Tensor weight;
  std::optional<Tensor> bias;
  Tensor split;
};

std::optional<Fusion> match_siblings(const Matcher& m, int n) {
  std::optional<Sibling> first = sibling_at(m, n);
  if (!first) return std::nullopt;
  const ValueId x = m.node(n).inputs[0];
  std::vector<Sibling> group = group_of(m, *first, x);
  // A group is fused once, at its first node.
  if (group.size() < 2 || group.front().node != n) return std::nullopt;
  int64_t total_n = 0;
  std::vector<int64_t> sizes;
  bool any_bias = false, any_linear = false;
  for (const Sibling& s : group) {
    total_n += s.w->dim(1);
    sizes.push_back(s.w->dim(1));
    any_bias = any_bias || s.b != nullptr;
    any_linear = any_linear || s.is_linear;
  }
  const int64_t k = first->w->dim(0);
  if (static_cast<size_t>(k) * static_cast<size_t>(total_n) *
          dtype_size(first->w->dtype()) >
      kMaxFoldedBytes) {
    return std::nullopt;
  }
  FusedConstants constants;
  std::optional<Tensor> weight = concat_weights(group, total_n);
  if (!weight) return std::nullopt;  // no memory: the siblings stay
  constants.weight = std::move(*weight);
  if (any_bias) {
    constants.bias = concat_biases(group, total_n);
    if (!constants.bias) return std::nullopt;
  }
  constants.split =
      Tensor::from_vector<int64_t>({static_cast<int64_t>(sizes.size())}, sizes);

  const Node& head = m.node(n);
  const std::string base =
      head.name.empty() ? m.graph().value(head.outputs[0]).name : head.name;
  Fusion fusion;
  Node product;
  product.name = base + ".fused";
  product.inputs = {x};
  if (any_linear) {
    product.domain = kSeqrtDomain;
    product.op = "Linear";
    product.attrs["activation"] = Attribute(first->activation);
  } else {
    product.op = "MatMul";
  }
  Node split;
  split.name = base + ".split";
  split.op = "Split";
  split.attrs["axis"] = Attribute(int64_t{-1});
  for (const Sibling& s : group) {
    fusion.remove.insert(s.node);
    split.outputs.push_back(m.node(s.node).outputs[0]);
  }
  fusion.add = {std::move(product), std::move(split)};

  // The product's type: X's with K replaced by ΣN.
  Shape y_shape = *m.shape(x);
  y_shape[y_shape.rank() - 1] = Dim(total_n);
  const DType dtype = m.dtype(x);
  fusion.create_values = [constants, base, y_shape, dtype](
                             Graph& graph, std::vector<Node>& add) {
    auto add_constant = [&](const std::string& name, const Tensor& value) {
      ValueId id = add_fresh_value(graph, name);
      graph.value(id).dtype = value.dtype();
      graph.value(id).shape = Shape::from_dims(value.dims());
      graph.constants[id] = value;
      return id;
    };
    Node& product = add[0];
    product.inputs.push_back(
        add_constant(base + ".fused_weight", constants.weight));
    if (constants.bias) {
      product.inputs.push_back(
          add_constant(base + ".fused_bias", *constants.bias));
    }
    ValueId y = add_fresh_value(graph, base + ".fused_output");
    graph.value(y).dtype = dtype;
    graph.value(y).shape = y_shape;
    product.outputs = {y};
    add[1].inputs = {y, add_constant(base + ".split_sizes", constants.split)};
  };
  return fusion;
}

}  // namespace

Pass fuse_sibling_linears_pass() {
  return {"fuse_sibling_linears",
          [](Graph& graph) { return apply_fusions(graph, match_siblings); }};
}

}  // namespace seqrt
