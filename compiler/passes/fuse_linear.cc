// MatMul(X, W) with W a constant 2-D (K, N), then Add with a constant bias
// that broadcasts to (N) only ((N) or (1, ..., 1, N)), then optionally an
// activation that is the only reader — Relu, Gelu (both forms), Sigmoid, or
// x*Sigmoid(x) — becomes seqrt::Linear(X, W, B, activation). Without the
// Add, a MatMul followed by an activation becomes a Linear without bias; a
// plain MatMul stays (the backend prepares its constant W all the same).
// PyTorch's nn.Linear exports W already transposed as an initializer, or
// as Transpose(Wt) that fold_constants turns into a constant first. The
// bias may be on either side of the Add.
#include "compiler/passes/match.h"
#include "compiler/passes/passes.h"

namespace seqrt {
namespace {

bool is_onnx_op(const Matcher& m, int n, const char* op) {
  return n >= 0 && m.node(n).op == op && m.node(n).domain.empty();
}

bool is_linear_dtype(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16;
}

// The MatMul at `n` when its W is a constant (K, N) of X's float dtype.
bool is_constant_weight_matmul(const Matcher& m, int n) {
  if (!is_onnx_op(m, n, "MatMul") || !m.node(n).attrs.empty()) return false;
  const Node& matmul = m.node(n);
  const Tensor* w = m.graph().constant(matmul.inputs[1]);
  const Shape* x = m.shape(matmul.inputs[0]);
  return w != nullptr && w->rank() == 2 && x != nullptr && x->rank() >= 1 &&
         is_linear_dtype(w->dtype()) && m.dtype(matmul.inputs[0]) == w->dtype();
}

// For Add(product, bias) or Add(bias, product): the bias when it is a
// constant of the product's dtype with dims (1, ..., 1, N), never widening.
std::optional<ValueId> row_bias(const Matcher& m, int add_n, ValueId product,
                                int64_t n) {
  if (!is_onnx_op(m, add_n, "Add")) return std::nullopt;
  std::optional<ValueId> bias =
      broadcast_operand(m, m.node(add_n), "Add", product);
  if (!bias || *bias == product) return std::nullopt;
  const Tensor* value = m.graph().constant(*bias);
  if (value == nullptr || value->rank() < 1 || value->dims().back() != n ||
      value->num_elements() != n || value->dtype() != m.dtype(product)) {
    return std::nullopt;
  }
  return bias;
}

struct ActivationMatch {
  std::string name;
  std::set<int> nodes;
  ValueId output = kNoValue;
};

// The activation reading `y` alone: Relu, Gelu, Sigmoid, or y*Sigmoid(y).
std::optional<ActivationMatch> activation_of(const Matcher& m, ValueId y) {
  const std::vector<int>& readers = m.uses().consumers[y];
  if (m.uses().is_output[y]) return std::nullopt;
  if (readers.size() == 2) {  // SiLU: Sigmoid(y) and Mul(y, Sigmoid(y))
    for (int side = 0; side < 2; ++side) {
      int sig = readers[side], mul = readers[1 - side];
      if (!is_onnx_op(m, sig, "Sigmoid") || !is_onnx_op(m, mul, "Mul") ||
          !m.node(sig).attrs.empty() || !m.node(mul).attrs.empty() ||
          sole_consumer(m, m.node(sig).outputs[0]) != mul) {
        continue;
      }
      const std::vector<ValueId>& in = m.node(mul).inputs;
      ValueId s = m.node(sig).outputs[0];
      if ((in[0] == y && in[1] == s) || (in[0] == s && in[1] == y)) {
        return ActivationMatch{"silu", {sig, mul}, m.node(mul).outputs[0]};
      }
    }
    return std::nullopt;
  }
  int n = sole_consumer(m, y);
  if (n < 0) return std::nullopt;
  const Node& node = m.node(n);
  std::string name;
  if (is_onnx_op(m, n, "Relu") && node.attrs.empty()) name = "relu";
  if (is_onnx_op(m, n, "Sigmoid") && node.attrs.empty()) name = "sigmoid";
  if (is_onnx_op(m, n, "Gelu") && has_only_attrs(node, {"approximate"})) {
    auto approximate = node.attrs.find("approximate");
    std::string form = approximate == node.attrs.end() ? "none"
                       : approximate->second.type() == AttrType::kString
                           ? approximate->second.as_string()
                           : "";
    if (form == "none") name = "gelu";
    if (form == "tanh") name = "gelu_tanh";
  }
  if (name.empty()) return std::nullopt;
  return ActivationMatch{name, {n}, node.outputs[0]};
}

std::optional<Fusion> match_linear(const Matcher& m, int n) {
  if (!is_constant_weight_matmul(m, n)) return std::nullopt;
  const Node& matmul = m.node(n);
  const int64_t out_n = m.graph().constant(matmul.inputs[1])->dim(1);
  Fusion fusion;
  fusion.remove = {n};
  ValueId y = matmul.outputs[0];
  int add_n = sole_consumer(m, y);
  std::optional<ValueId> bias = row_bias(m, add_n, y, out_n);
  if (bias) {
    fusion.remove.insert(add_n);
    y = m.node(add_n).outputs[0];
  }
  std::optional<ActivationMatch> act = activation_of(m, y);
  if (!bias && !act) return std::nullopt;  // a plain MatMul stays
  if (act) {
    fusion.remove.insert(act->nodes.begin(), act->nodes.end());
    y = act->output;
  }
  if (!m.is_private(fusion.remove, {y})) return std::nullopt;
  Node linear;
  linear.name = matmul.name;
  linear.domain = kSeqrtDomain;
  linear.op = "Linear";
  linear.inputs = {matmul.inputs[0], matmul.inputs[1]};
  linear.outputs = {y};
  if (act) linear.attrs["activation"] = Attribute(act->name);
  const Tensor* bias_value = bias ? m.graph().constant(*bias) : nullptr;
  if (bias_value != nullptr && bias_value->rank() == 1) {
    linear.inputs.push_back(*bias);
  } else if (bias_value != nullptr) {
    // Linear's B is (N): a flat copy of the (1, ..., 1, N) constant.
    Tensor flat = bias_value->reshaped({out_n}).value();
    std::string base = m.graph().value(*bias).name;
    fusion.create_values = [flat, base](Graph& graph, std::vector<Node>& add) {
      ValueId id = add_fresh_value(graph, base + "_row");
      graph.value(id).dtype = flat.dtype();
      graph.value(id).shape = Shape::from_dims(flat.dims());
      graph.constants[id] = flat;
      add.front().inputs.push_back(id);
    };
  }
  fusion.add.push_back(std::move(linear));
  return fusion;
}

}  // namespace

Pass fuse_linear_pass() {
  return {"fuse_linear",
          [](Graph& graph) { return apply_fusions(graph, match_linear); }};
}

}  // namespace seqrt
