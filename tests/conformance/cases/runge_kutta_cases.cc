// Conformance cases of seqrt::RungeKutta: every method on a small
// transformer-style body (MatMul + Add + Gelu/Relu + LayerNormalization)
// whose weights are captured outer values, a linear body, a zero gate, f16,
// and the error paths (missing gate, gate of the wrong shape, a body that
// changes the shape, a body with two inputs).
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

constexpr int64_t kWidth = 8;
constexpr int64_t kHidden = 16;

std::shared_ptr<Graph> finish(GraphBuilder builder) {
  Result<Graph> graph = std::move(builder).build();
  Status status = graph.is_ok() ? infer_graph(*graph) : graph.status();
  if (!status.is_ok()) {
    std::fprintf(stderr, "runge_kutta_cases: bad body: %s\n",
                 status.to_string().c_str());
    std::abort();
  }
  return std::make_shared<Graph>(std::move(graph).value());
}

// F(y) = LayerNorm(act(y·W1 + b1)·W2 + b2), the weights captured.
std::shared_ptr<Graph> layer_body(const std::string& activation,
                                  Shape y_shape) {
  GraphBuilder b("layer_" + activation);
  ValueId y = b.input("y", DType::kF32, y_shape);
  auto cap = [&](const char* name, Shape shape) {
    return b.capture(name, DType::kF32, shape);
  };
  ValueId w1 = cap("w1", Shape{kWidth, kHidden});
  ValueId b1 = cap("b1", Shape{kHidden});
  ValueId w2 = cap("w2", Shape{kHidden, kWidth});
  ValueId b2 = cap("b2", Shape{kWidth});
  ValueId ln_scale = cap("ln_scale", Shape{kWidth});
  ValueId ln_bias = cap("ln_bias", Shape{kWidth});
  ValueId h = b.add("Add", {b.add("MatMul", {y, w1}), b1});
  h = b.add(activation, {h});
  ValueId o = b.add("Add", {b.add("MatMul", {h, w2}), b2});
  b.output(b.add("LayerNormalization", {o, ln_scale, ln_bias},
                 {{"axis", int64_t{-1}}}),
           "f");
  return finish(std::move(b));
}

// F(y) = λ·y.
std::shared_ptr<Graph> linear_body(DType dtype, Shape shape, float lambda) {
  GraphBuilder b("linear");
  ValueId y = b.input("y", dtype, shape);
  Tensor l = Tensor::allocate(dtype, {}).value();
  l.set_element_f64(0, lambda);
  b.output(b.add("Mul", {y, b.constant("lambda", l)}), "f");
  return finish(std::move(b));
}

OpCase rk_case(const std::string& name, std::vector<Tensor> inputs,
               std::shared_ptr<Graph> body, const std::string& method) {
  OpCase c = make_case("RungeKutta", name, std::move(inputs),
                       {{"body", std::move(body)}, {"method", method}});
  c.domain = kSeqrtDomain;
  return c;
}

// The layer's weights, as the outer values its body captures.
OpCase with_layer_weights(OpCase c) {
  uint64_t seed = 900;
  c.outer_values = {
      {"w1", random_tensor(DType::kF32, {kWidth, kHidden}, ++seed, -0.5, 0.5)},
      {"b1", random_tensor(DType::kF32, {kHidden}, ++seed, -0.1, 0.1)},
      {"w2", random_tensor(DType::kF32, {kHidden, kWidth}, ++seed, -0.5, 0.5)},
      {"b2", random_tensor(DType::kF32, {kWidth}, ++seed, -0.1, 0.1)},
      {"ln_scale", random_tensor(DType::kF32, {kWidth}, ++seed, 0.5, 1.5)},
      {"ln_bias", random_tensor(DType::kF32, {kWidth}, ++seed, -0.2, 0.2)},
  };
  return loosened(std::move(c), 1e-4);
}

Tensor gate_weight(uint64_t seed) {
  return random_tensor(DType::kF32, {2 * kWidth}, seed, -0.5, 0.5);
}

void add_layer_cases(std::vector<OpCase>& cases) {
  Shape shape{2, 5, kWidth};
  auto gelu = layer_body("Gelu", shape);
  auto relu = layer_body("Relu", shape);
  Tensor y = random_tensor(DType::kF32, {2, 5, kWidth}, 950, -1, 1);
  for (const char* method : {"euler", "rk2", "rk4"}) {
    cases.push_back(with_layer_weights(
        rk_case(std::string("layer_gelu_") + method, {y}, gelu, method)));
  }
  cases.push_back(
      with_layer_weights(rk_case("layer_relu_rk4", {y}, relu, "rk4")));
  cases.push_back(with_layer_weights(rk_case(
      "layer_gelu_rk2_gated",
      {y, gate_weight(951), random_tensor(DType::kF32, {1}, 952, -0.3, 0.3)},
      gelu, "rk2_gated")));
  Tensor zero_w = Tensor::allocate(DType::kF32, {2 * kWidth}).value();
  Tensor zero_b = Tensor::allocate(DType::kF32, {1}).value();
  cases.push_back(with_layer_weights(
      rk_case("layer_relu_zero_gate", {y, zero_w, zero_b}, relu, "rk2_gated")));
}

void add_linear_cases(std::vector<OpCase>& cases) {
  for (const char* method : {"euler", "rk2", "rk2_gated", "rk4"}) {
    std::vector<Tensor> inputs = {
        random_tensor(DType::kF32, {3, 4}, 960, -2, 2)};
    if (std::string(method) == "rk2_gated") {
      inputs.push_back(random_tensor(DType::kF32, {8}, 961));
      inputs.push_back(random_tensor(DType::kF32, {1}, 962));
    }
    cases.push_back(rk_case(std::string("linear_") + method, inputs,
                            linear_body(DType::kF32, Shape{3, 4}, -0.7f),
                            method));
  }
  cases.push_back(loosened(
      rk_case("linear_f16_rk4", {random_tensor(DType::kF16, {2, 6}, 963)},
              linear_body(DType::kF16, Shape{2, 6}, 0.5f), "rk4"),
      1e-2));
}

void add_error_cases(std::vector<OpCase>& cases) {
  Shape shape{2, 4};
  Tensor y = random_tensor(DType::kF32, {2, 4}, 970);
  auto linear = linear_body(DType::kF32, shape, 0.5f);
  cases.push_back(expect_failure(
      rk_case("rejects_gated_without_gate", {y}, linear, "rk2_gated")));
  cases.push_back(
      expect_failure(rk_case("rejects_gate_weight_not_2d",
                             {y, random_tensor(DType::kF32, {4}, 971),
                              random_tensor(DType::kF32, {1}, 972)},
                             linear, "rk2_gated")));
  GraphBuilder widen("widen");
  ValueId x = widen.input("y", DType::kF32, shape);
  widen.output(widen.add("Concat", {x, x}, {{"axis", int64_t{1}}}), "f");
  cases.push_back(expect_failure(rk_case("rejects_shape_changing_body", {y},
                                         finish(std::move(widen)), "rk2")));
  GraphBuilder two("two_inputs");
  ValueId a = two.input("a", DType::kF32, shape);
  ValueId b = two.input("b", DType::kF32, shape);
  two.output(two.add("Add", {a, b}), "f");
  cases.push_back(expect_failure(rk_case("rejects_body_with_two_inputs", {y},
                                         finish(std::move(two)), "euler")));
}

}  // namespace

void add_runge_kutta_cases(std::vector<OpCase>& cases) {
  add_layer_cases(cases);
  add_linear_cases(cases);
  add_error_cases(cases);
}

}  // namespace seqrt
