// RMSNorm as PyTorch and Hugging Face export it:
//   a = Add(ReduceMean(Pow(x, 2) | Mul(x, x), axes), eps)
//   n = Div(x, Sqrt(a))                      or
//   n = Mul(x, Reciprocal(Sqrt(a)) | Div(1, Sqrt(a)) | Pow(a, -0.5))
//   y = Mul(n, gamma)
// with axes the trailing axes [k, rank), becomes
// RMSNormalization(x, gamma, axis=k, epsilon=eps).
#include "compiler/passes/match.h"
#include "compiler/passes/passes.h"

namespace seqrt {
namespace {

bool is_op(const Matcher& m, int n, const char* op) {
  return n >= 0 && m.node(n).op == op && m.node(n).domain.empty() &&
         m.node(n).attrs.empty();
}

// Pow(x, 2) or Mul(x, x): returns x.
std::optional<ValueId> squared(const Matcher& m, int n) {
  if (is_op(m, n, "Mul") && m.node(n).inputs[0] == m.node(n).inputs[1]) {
    return m.node(n).inputs[0];
  }
  if (!is_op(m, n, "Pow")) return std::nullopt;
  std::optional<double> exponent = m.scalar(m.node(n).inputs[1]);
  if (!exponent || *exponent != 2.0) return std::nullopt;
  return m.node(n).inputs[0];
}

// From a = Add(mean, eps) to n = x / sqrt(a): the nodes on the way and n.
std::optional<ValueId> match_inverse_root(const Matcher& m, int add_n,
                                          ValueId x, std::set<int>& nodes) {
  ValueId a = m.node(add_n).outputs[0];
  int c = sole_consumer(m, a);
  ValueId r = kNoValue;
  if (is_op(m, c, "Pow")) {
    std::optional<double> exponent = m.scalar(m.node(c).inputs[1]);
    if (m.node(c).inputs[0] != a || !exponent || *exponent != -0.5) {
      return std::nullopt;
    }
    r = m.node(c).outputs[0];
  } else if (is_op(m, c, "Sqrt")) {
    ValueId s = m.node(c).outputs[0];
    int c2 = sole_consumer(m, s);
    if (c2 < 0) return std::nullopt;
    const Node& next = m.node(c2);
    nodes.insert(c2);
    if (is_op(m, c2, "Div") && next.inputs[1] == s && next.inputs[0] == x) {
      nodes.insert(c);
      return next.outputs[0];
    }
    bool one_over =
        is_op(m, c2, "Div") && next.inputs[1] == s &&
        m.scalar(next.inputs[0]) == 1.0 && m.shape(s) != nullptr &&
        m.graph().constant(next.inputs[0])->rank() <= m.shape(s)->rank();
    if (!is_op(m, c2, "Reciprocal") && !one_over) return std::nullopt;
    r = next.outputs[0];
  } else {
    return std::nullopt;
  }
  nodes.insert(c);
  int mul_n = sole_consumer(m, r);
  if (!is_op(m, mul_n, "Mul")) return std::nullopt;
  const Node& mul = m.node(mul_n);
  bool x_times_r = (mul.inputs[0] == x && mul.inputs[1] == r) ||
                   (mul.inputs[0] == r && mul.inputs[1] == x);
  const Shape* out = m.shape(mul.outputs[0]);
  if (!x_times_r || out == nullptr || *out != *m.shape(x)) return std::nullopt;
  nodes.insert(mul_n);
  return mul.outputs[0];
}

std::optional<Fusion> match_rms_norm(const Matcher& m, int add_n) {
  if (!is_op(m, add_n, "Add")) return std::nullopt;
  auto mean_eps = m.with_scalar(m.node(add_n));
  int mean_n = mean_eps ? m.producer(mean_eps->first, "ReduceMean") : -1;
  if (mean_n < 0 || mean_eps->second <= 0) return std::nullopt;
  std::optional<int64_t> axis = trailing_mean_axis(m, m.node(mean_n));
  int square_n = m.uses().producer[m.node(mean_n).inputs[0]];
  std::optional<ValueId> x = square_n < 0 ? std::nullopt : squared(m, square_n);
  if (!axis || !x || m.shape(*x) == nullptr || !is_float(m.dtype(*x))) {
    return std::nullopt;
  }
  if (m.graph().constant(m.node(square_n).inputs[1]) != nullptr &&
      m.graph().constant(m.node(square_n).inputs[1])->rank() >
          m.shape(*x)->rank()) {
    return std::nullopt;  // the exponent would widen x
  }
  Fusion fusion;
  fusion.remove = {square_n, mean_n, add_n};
  std::optional<ValueId> n = match_inverse_root(m, add_n, *x, fusion.remove);
  int gamma_n = n ? sole_consumer(m, *n) : -1;
  std::optional<ValueId> gamma =
      gamma_n < 0 ? std::nullopt
                  : broadcast_operand(m, m.node(gamma_n), "Mul", *n);
  if (!gamma) return std::nullopt;
  fusion.remove.insert(gamma_n);
  ValueId y = m.node(gamma_n).outputs[0];
  if (!m.is_private(fusion.remove, {y})) return std::nullopt;
  Node fused;
  fused.name = m.node(gamma_n).name;
  fused.op = "RMSNormalization";
  fused.inputs = {*x, *gamma};
  fused.outputs = {y};
  fused.attrs = {{"axis", Attribute(*axis)},
                 {"epsilon", Attribute(static_cast<float>(mean_eps->second))}};
  fusion.add.push_back(std::move(fused));
  return fusion;
}

}  // namespace

Pass fuse_rms_norm_pass() {
  return {"fuse_rms_norm",
          [](Graph& graph) { return apply_fusions(graph, match_rms_norm); }};
}

}  // namespace seqrt
