// LayerNorm as PyTorch exports it before opset 17:
//   mean = ReduceMean(x, axes)      d = Sub(x, mean)
//   var  = ReduceMean(Pow(d, 2) | Mul(d, d), axes)
//   y    = Add(Mul(Div(d, Sqrt(Add(var, eps))), gamma), beta)
// with axes the trailing axes [a, rank), becomes
// LayerNormalization(x, gamma, beta?, axis=a, epsilon=eps).
#include "compiler/passes/match.h"
#include "compiler/passes/passes.h"

namespace seqrt {
namespace {

// d = Sub(x, ReduceMean(x, axes [axis, rank))): returns the Sub and mean
// node indices and x.
struct Centered {
  int sub = -1;
  int mean = -1;
  ValueId x = kNoValue;
};

std::optional<Centered> match_centered(const Matcher& m, ValueId d,
                                       int64_t axis) {
  Centered c;
  c.sub = m.producer(d, "Sub");
  if (c.sub < 0 || !m.node(c.sub).attrs.empty()) return std::nullopt;
  c.x = m.node(c.sub).inputs[0];
  c.mean = m.producer(m.node(c.sub).inputs[1], "ReduceMean");
  if (c.mean < 0 || m.node(c.mean).inputs[0] != c.x ||
      trailing_mean_axis(m, m.node(c.mean)) != axis) {
    return std::nullopt;
  }
  const Shape* x_shape = m.shape(c.x);
  const Shape* d_shape = m.shape(d);
  if (x_shape == nullptr || d_shape == nullptr || *x_shape != *d_shape) {
    return std::nullopt;
  }
  return c;
}

// Pow(d, 2) or Mul(d, d).
bool is_square_of(const Matcher& m, int n, ValueId d) {
  if (n < 0) return false;
  const Node& node = m.node(n);
  if (!node.attrs.empty() || node.inputs.size() != 2) return false;
  if (node.op == "Mul") return node.inputs[0] == d && node.inputs[1] == d;
  if (node.op != "Pow" || node.inputs[0] != d) return false;
  std::optional<double> exponent = m.scalar(node.inputs[1]);
  return exponent && *exponent == 2.0 &&
         m.graph().constant(node.inputs[1])->rank() <= m.shape(d)->rank();
}

std::optional<Fusion> match_layer_norm(const Matcher& m, int div_index) {
  const Node& div = m.node(div_index);
  if (div.op != "Div" || !div.domain.empty() || !div.attrs.empty()) {
    return std::nullopt;
  }
  ValueId d = div.inputs[0];
  int sqrt_n = m.producer(div.inputs[1], "Sqrt");
  int add_eps = sqrt_n < 0 ? -1 : m.producer(m.node(sqrt_n).inputs[0], "Add");
  if (add_eps < 0 || m.shape(d) == nullptr) return std::nullopt;
  auto var_eps = m.with_scalar(m.node(add_eps));
  int var_n = var_eps ? m.producer(var_eps->first, "ReduceMean") : -1;
  if (var_n < 0 || var_eps->second <= 0) return std::nullopt;
  std::optional<int64_t> axis = trailing_mean_axis(m, m.node(var_n));
  int square_n = m.uses().producer[m.node(var_n).inputs[0]];
  if (!axis || !is_square_of(m, square_n, d)) return std::nullopt;
  std::optional<Centered> centered = match_centered(m, d, *axis);
  if (!centered || !is_float(m.dtype(centered->x))) return std::nullopt;

  int mul_n = sole_consumer(m, div.outputs[0]);
  if (mul_n < 0) return std::nullopt;
  std::optional<ValueId> gamma =
      broadcast_operand(m, m.node(mul_n), "Mul", div.outputs[0]);
  if (!gamma) return std::nullopt;
  Fusion fusion;
  fusion.remove = {centered->mean, centered->sub, square_n,  var_n,
                   add_eps,        sqrt_n,        div_index, mul_n};
  ValueId beta = kNoValue;
  ValueId y = m.node(mul_n).outputs[0];
  int add_n = sole_consumer(m, y);
  if (add_n >= 0) {
    std::optional<ValueId> b = broadcast_operand(m, m.node(add_n), "Add", y);
    if (b) {
      beta = *b;
      y = m.node(add_n).outputs[0];
      fusion.remove.insert(add_n);
    }
  }
  if (!m.is_private(fusion.remove, {y})) return std::nullopt;
  Node fused;
  fused.name = m.node(m.uses().producer[y]).name;
  fused.op = "LayerNormalization";
  fused.inputs = {centered->x, *gamma};
  if (beta != kNoValue) fused.inputs.push_back(beta);
  fused.outputs = {y};
  fused.attrs = {{"axis", Attribute(*axis)},
                 {"epsilon", Attribute(static_cast<float>(var_eps->second))}};
  fusion.add.push_back(std::move(fused));
  return fusion;
}

}  // namespace

Pass fuse_layer_norm_pass() {
  return {"fuse_layer_norm",
          [](Graph& graph) { return apply_fusions(graph, match_layer_norm); }};
}

}  // namespace seqrt
