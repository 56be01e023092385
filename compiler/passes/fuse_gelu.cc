// GELU as PyTorch and Hugging Face export it:
//   erf form:  x * 0.5 * (1 + Erf(x / sqrt(2)))          -> Gelu
//   tanh form: x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
//                                                   -> Gelu(approximate=tanh)
// The three factors x, 0.5 and (1 + ...) may be multiplied in any order;
// x/sqrt(2) may be a Mul by 1/sqrt(2) and x^3 may be Pow(x, 3) or x*x*x.
#include <cmath>

#include "compiler/passes/match.h"
#include "compiler/passes/passes.h"

namespace seqrt {
namespace {

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kTanhCubic = 0.044715;

bool is_op(const Matcher& m, int n, const char* op) {
  return n >= 0 && m.node(n).op == op && m.node(n).domain.empty() &&
         m.node(n).attrs.empty();
}

// `v` = `op`(x, c) with c the scalar `value` (either side for Mul): x.
std::optional<ValueId> scaled(const Matcher& m, ValueId v, const char* op,
                              double value, std::set<int>& nodes) {
  int n = m.uses().producer[v];
  if (!is_op(m, n, op)) return std::nullopt;
  auto found = m.with_scalar(m.node(n));
  if (!found || !near(found->second, value)) return std::nullopt;
  nodes.insert(n);
  return found->first;
}

// x / sqrt(2) or x * (1/sqrt(2)): x.
std::optional<ValueId> erf_argument(const Matcher& m, ValueId u,
                                    std::set<int>& nodes) {
  std::optional<ValueId> x = scaled(m, u, "Div", kSqrt2, nodes);
  return x ? x : scaled(m, u, "Mul", 1.0 / kSqrt2, nodes);
}

// x^3 as Pow(x, 3), Mul(Mul(x, x), x) or Mul(x, Mul(x, x)): x.
std::optional<ValueId> cube_of(const Matcher& m, ValueId v,
                               std::set<int>& nodes) {
  int n = m.uses().producer[v];
  if (is_op(m, n, "Pow")) {
    std::optional<double> exponent = m.scalar(m.node(n).inputs[1]);
    if (!exponent || *exponent != 3.0) return std::nullopt;
    nodes.insert(n);
    return m.node(n).inputs[0];
  }
  if (!is_op(m, n, "Mul")) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    ValueId x = m.node(n).inputs[side];
    int sq = m.uses().producer[m.node(n).inputs[1 - side]];
    if (is_op(m, sq, "Mul") && m.node(sq).inputs[0] == x &&
        m.node(sq).inputs[1] == x) {
      nodes.insert({n, sq});
      return x;
    }
  }
  return std::nullopt;
}

// sqrt(2/pi) * (x + 0.044715 * x^3): x.
std::optional<ValueId> tanh_argument(const Matcher& m, ValueId u,
                                     std::set<int>& nodes) {
  std::optional<ValueId> inner = scaled(m, u, "Mul", kSqrt2OverPi, nodes);
  int add_n = inner ? m.uses().producer[*inner] : -1;
  if (!is_op(m, add_n, "Add")) return std::nullopt;
  nodes.insert(add_n);
  for (int side = 0; side < 2; ++side) {
    ValueId x = m.node(add_n).inputs[side];
    std::set<int> cube_nodes;
    std::optional<ValueId> cubed = scaled(m, m.node(add_n).inputs[1 - side],
                                          "Mul", kTanhCubic, cube_nodes);
    if (!cubed) continue;
    std::optional<ValueId> base = cube_of(m, *cubed, cube_nodes);
    if (base == x) {
      nodes.insert(cube_nodes.begin(), cube_nodes.end());
      return x;
    }
  }
  return std::nullopt;
}

// From A = 1 + f(x) to y = x * 0.5 * A in any association: y.
std::optional<ValueId> times_half_x(const Matcher& m, ValueId a, ValueId x,
                                    std::set<int>& nodes) {
  int mul_n = sole_consumer(m, a);
  if (!is_op(m, mul_n, "Mul")) return std::nullopt;
  const Node& mul = m.node(mul_n);
  ValueId other = mul.inputs[0] == a ? mul.inputs[1] : mul.inputs[0];
  ValueId out = mul.outputs[0];
  nodes.insert(mul_n);
  std::optional<ValueId> result;
  if (other == x) {  // (x * A) * 0.5
    int half_n = sole_consumer(m, out);
    auto half = half_n < 0 ? std::nullopt : m.with_scalar(m.node(half_n));
    if (is_op(m, half_n, "Mul") && half && half->first == out &&
        half->second == 0.5) {
      nodes.insert(half_n);
      result = m.node(half_n).outputs[0];
    }
  } else if (m.scalar(other) == 0.5) {  // (A * 0.5) * x
    int x_n = sole_consumer(m, out);
    if (is_op(m, x_n, "Mul") && m.with_scalar(mul) &&
        (m.node(x_n).inputs[0] == x) != (m.node(x_n).inputs[1] == x)) {
      nodes.insert(x_n);
      result = m.node(x_n).outputs[0];
    }
  } else if (scaled(m, other, "Mul", 0.5, nodes) == x) {  // (x * 0.5) * A
    result = out;
  }
  if (!result || m.shape(*result) == nullptr ||
      *m.shape(*result) != *m.shape(x)) {
    return std::nullopt;  // a widening broadcast somewhere
  }
  return result;
}

std::optional<Fusion> match_gelu(const Matcher& m, int n) {
  bool erf = is_op(m, n, "Erf");
  if (!erf && !is_op(m, n, "Tanh")) return std::nullopt;
  Fusion fusion;
  fusion.remove = {n};
  ValueId u = m.node(n).inputs[0];
  std::optional<ValueId> x = erf ? erf_argument(m, u, fusion.remove)
                                 : tanh_argument(m, u, fusion.remove);
  if (!x || m.shape(*x) == nullptr || !is_float(m.dtype(*x))) {
    return std::nullopt;
  }
  ValueId f = m.node(n).outputs[0];
  int add_n = sole_consumer(m, f);
  auto one =
      is_op(m, add_n, "Add") ? m.with_scalar(m.node(add_n)) : std::nullopt;
  if (!one || one->first != f || one->second != 1.0) return std::nullopt;
  fusion.remove.insert(add_n);
  std::optional<ValueId> y =
      times_half_x(m, m.node(add_n).outputs[0], *x, fusion.remove);
  if (!y || !m.is_private(fusion.remove, {*y})) return std::nullopt;
  Node fused;
  fused.name = m.node(m.uses().producer[*y]).name;
  fused.op = "Gelu";
  fused.inputs = {*x};
  fused.outputs = {*y};
  if (!erf) fused.attrs = {{"approximate", Attribute("tanh")}};
  fusion.add.push_back(std::move(fused));
  return fusion;
}

}  // namespace

Pass fuse_gelu_pass() {
  return {"fuse_gelu",
          [](Graph& graph) { return apply_fusions(graph, match_gelu); }};
}

}  // namespace seqrt
