// Two or more products of the same X with constant 2-D weights — ONNX
// MatMul(X, W_i), or seqrt::Linear(X, W_i, B_i?, activation) — become one
// node over the weights concatenated along N (the biases too, zeros where a
// sibling has none) and one Split on the last axis into the old outputs.
// Llama's q/k/v projections (GQA: different N_i) then read X once, in one
// larger GEMM. A MatMul counts as a Linear without bias or activation, so
// Whisper's biasless k_proj (left a MatMul by fuse_linear) joins its q_proj
// and v_proj. Siblings join when they share the weight dtype, K and the
// activation; the fused node is a MatMul when all of them were. Quantized
// Linears (bits 4/8: W, W_scale and W_zero_point (N, ...)) join siblings of
// the same attributes and zero-point presence, their tensors stacked along
// N; a MatMulNBits file's q/k/v then run as one GEMV, X quantized once. A
// group whose concatenated weight would pass kMaxFoldedBytes stays as it
// is.
#include <algorithm>
#include <cstring>

#include "compiler/passes/match.h"
#include "compiler/passes/passes.h"
#include "ops/linalg/quantized_linear.h"

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
  const Tensor* w = nullptr;  // (K, N); quantized: the codes (N, row bytes)
  const Tensor* b = nullptr;  // (N) or none
  // The quantized form: bits 4/8 (0: float), the attributes siblings share,
  // W_scale and W_zero_point (N, n_blocks; or none).
  int64_t bits = 0, block_size = 0, k = 0, activation_bits = 0;
  const Tensor* scale = nullptr;
  const Tensor* zero_point = nullptr;

  int64_t n() const { return bits != 0 ? w->dim(0) : w->dim(1); }
  int64_t k_dim() const { return bits != 0 ? k : w->dim(0); }
};

std::string linear_activation(const Node& node) {
  auto it = node.attrs.find("activation");
  if (it == node.attrs.end()) return "none";
  return it->second.type() == AttrType::kString ? it->second.as_string() : "";
}

// The quantized Linear at `n` (bits 4/8) as a sibling: constant W, W_scale
// and W_zero_point, and a constant f32 bias if any.
std::optional<Sibling> quantized_sibling_at(const Matcher& m, int n,
                                            Sibling s) {
  const Node& node = m.node(n);
  auto constant = [&](size_t i) -> const Tensor* {
    return i < node.inputs.size() && node.inputs[i] != kNoValue
               ? m.graph().constant(node.inputs[i])
               : nullptr;
  };
  auto absent = [&](size_t i) {
    return i >= node.inputs.size() || node.inputs[i] == kNoValue;
  };
  s.bits = int_attr(node, "bits", 0);
  s.block_size = int_attr(node, "block_size", 0);
  s.k = int_attr(node, "K", 0);
  s.activation_bits = int_attr(node, "activation_bits", 0);
  s.w = constant(kLinearW);
  s.scale = constant(kLinearWScale);
  s.zero_point = constant(kLinearWZeroPoint);
  s.b = constant(kLinearB);
  if (s.w == nullptr || s.scale == nullptr || s.w->rank() != 2 ||
      s.scale->rank() != 2 || s.scale->dim(0) != s.w->dim(0) ||
      (s.zero_point == nullptr && !absent(kLinearWZeroPoint)) ||
      (s.zero_point != nullptr && s.zero_point->dims() != s.scale->dims()) ||
      (s.b == nullptr && !absent(kLinearB)) ||
      (s.b != nullptr && (s.b->rank() != 1 || s.b->dim(0) != s.w->dim(0) ||
                          s.b->dtype() != m.dtype(node.inputs[0])))) {
    return std::nullopt;
  }
  return s;
}

// The node at `n` as a sibling: a product of its first input with a
// constant 2-D weight of that input's float dtype, or a quantized Linear.
std::optional<Sibling> sibling_at(const Matcher& m, int n) {
  const Node& node = m.node(n);
  Sibling s;
  s.node = n;
  if (node.domain.empty() && node.op == "MatMul" && node.attrs.empty() &&
      node.inputs.size() == 2) {
    s.activation = "none";
  } else if (node.domain == kSeqrtDomain && node.op == "Linear" &&
             has_only_attrs(node, {"activation", "bits", "block_size", "K",
                                   "activation_bits"}) &&
             node.inputs.size() >= 2 &&
             node.inputs.size() <= kLinearInputCount) {
    s.is_linear = true;
    s.activation = linear_activation(node);
    if (s.activation.empty()) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (node.outputs.size() != 1) return std::nullopt;
  const ValueId x = node.inputs[0];
  if (node.inputs[1] == kNoValue || x == kNoValue) return std::nullopt;
  const Shape* x_shape = m.shape(x);
  if (x_shape == nullptr || x_shape->rank() < 1) return std::nullopt;
  if (s.is_linear && int_attr(node, "bits", 0) != 0) {
    return quantized_sibling_at(m, n, std::move(s));
  }
  if (node.inputs.size() > 3) return std::nullopt;
  s.w = m.graph().constant(node.inputs[1]);
  if (s.w == nullptr || s.w->rank() != 2 || !is_linear_dtype(s.w->dtype()) ||
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

// Whether two quantized siblings' W, W_scale and W_zero_point stack: the
// same width and dtype each (a malformed node fails its own check later).
bool same_quantized_layout(const Sibling& first, const Sibling& other) {
  auto same = [](const Tensor* a, const Tensor* b) {
    return a == nullptr || (a->dtype() == b->dtype() && a->dim(1) == b->dim(1));
  };
  return same(first.w, other.w) && same(first.scale, other.scale) &&
         same(first.zero_point, other.zero_point);
}

bool joins(const Sibling& first, const Sibling& other) {
  return other.activation == first.activation &&
         other.w->dtype() == first.w->dtype() &&
         other.k_dim() == first.k_dim() && other.bits == first.bits &&
         other.block_size == first.block_size &&
         other.activation_bits == first.activation_bits &&
         (other.zero_point == nullptr) == (first.zero_point == nullptr) &&
         (first.bits == 0 || same_quantized_layout(first, other));
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

// The siblings' (N_i, C) tensors `part` stacked into (ΣN, C).
std::optional<Tensor> stack_rows(const std::vector<Sibling>& group,
                                 int64_t total_n,
                                 const Tensor* Sibling::*part) {
  const Tensor& t0 = *(group.front().*part);
  Result<Tensor> fused = Tensor::allocate(t0.dtype(), {total_n, t0.dim(1)});
  if (!fused.is_ok()) return std::nullopt;
  auto* out = static_cast<char*>(fused->mutable_data());
  for (const Sibling& s : group) {
    const Tensor& t = *(s.*part);
    std::memcpy(out, t.data(), t.byte_size());
    out += t.byte_size();
  }
  return std::move(fused).value();
}

// The fused weight: (K, ΣN), each row the siblings' rows side by side; the
// quantized codes (ΣN, row bytes), stacked.
std::optional<Tensor> concat_weights(const std::vector<Sibling>& group,
                                     int64_t total_n) {
  if (group.front().bits != 0) return stack_rows(group, total_n, &Sibling::w);
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
                                    int64_t total_n, DType dtype) {
  Result<Tensor> fused = Tensor::allocate(dtype, {total_n});
  if (!fused.is_ok()) return std::nullopt;
  auto* out = static_cast<char*>(fused->mutable_data());
  for (const Sibling& s : group) {
    if (s.b != nullptr) std::memcpy(out, s.b->data(), s.b->byte_size());
    out += s.n() * dtype_size(dtype);
  }
  return std::move(fused).value();
}

struct FusedConstants {
  Tensor weight;
  std::optional<Tensor> bias;
  std::optional<Tensor> scale, zero_point;  // the quantized form's
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
    total_n += s.n();
    sizes.push_back(s.n());
    any_bias = any_bias || s.b != nullptr;
    any_linear = any_linear || s.is_linear;
  }
  const int64_t row = first->bits != 0 ? first->w->dim(1) : first->w->dim(0);
  if (static_cast<size_t>(row) * static_cast<size_t>(total_n) *
          dtype_size(first->w->dtype()) >
      kMaxFoldedBytes) {
    return std::nullopt;
  }
  FusedConstants constants;
  std::optional<Tensor> weight = concat_weights(group, total_n);
  if (!weight) return std::nullopt;  // no memory: the siblings stay
  constants.weight = std::move(*weight);
  if (any_bias) {
    constants.bias = concat_biases(group, total_n, m.dtype(x));
    if (!constants.bias) return std::nullopt;
  }
  if (first->bits != 0) {
    constants.scale = stack_rows(group, total_n, &Sibling::scale);
    if (!constants.scale) return std::nullopt;
    if (first->zero_point != nullptr) {
      constants.zero_point = stack_rows(group, total_n, &Sibling::zero_point);
      if (!constants.zero_point) return std::nullopt;
    }
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
    // A quantized group shares every attribute; a float one the activation.
    if (first->bits != 0) product.attrs = head.attrs;
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
    const bool quantized = constants.scale.has_value();
    if (constants.bias) {
      product.inputs.push_back(
          add_constant(base + ".fused_bias", *constants.bias));
    } else if (quantized) {
      product.inputs.push_back(kNoValue);
    }
    if (quantized) {
      product.inputs.push_back(
          add_constant(base + ".fused_scale", *constants.scale));
    }
    if (constants.zero_point) {
      product.inputs.push_back(
          add_constant(base + ".fused_zero_point", *constants.zero_point));
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
