// seqrt::RungeKutta reference: linear bodies give the Taylor polynomials of
// exp(λ) of order 1/2/4, a zero gate equals rk2, hand-computed gates, and
// the error paths at inference and in the kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>

#include "backends/host/interpreter.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using namespace op_testing;  // NOLINT

std::shared_ptr<Graph> typed_body(GraphBuilder builder) {
  Result<Graph> graph = std::move(builder).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  if (!graph.is_ok()) return nullptr;
  Status status = infer_graph(*graph);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  return std::make_shared<Graph>(std::move(graph).value());
}

// F(y) = λ·y in `dtype`.
std::shared_ptr<Graph> linear_body(DType dtype, Shape shape, double lambda) {
  GraphBuilder b("linear");
  ValueId y = b.input("y", dtype, shape);
  Tensor l = Tensor::allocate(dtype, {}).value();
  l.set_element_f64(0, lambda);
  b.output(b.add("Mul", {y, b.constant("lambda", l)}), "f");
  return typed_body(std::move(b));
}

// F(y) = tanh(y), nonlinear so that the stages differ.
std::shared_ptr<Graph> tanh_body(Shape shape) {
  GraphBuilder b("tanh");
  b.output(b.add("Tanh", {b.input("y", DType::kF32, shape)}), "f");
  return typed_body(std::move(b));
}

const OpSchema& rk_schema() {
  const OpSchema* schema =
      OpRegistry::global().find(kSeqrtDomain, "RungeKutta");
  EXPECT_NE(schema, nullptr);
  if (schema == nullptr) std::abort();
  return *schema;
}

AttrMap attrs_of(std::shared_ptr<Graph> body, const std::string& method) {
  return {{"body", std::move(body)}, {"method", method}};
}

// The reference kernel with a runner that interprets bodies with the
// reference kernels, as the reference backend does.
Result<Tensor> run_rk(const std::vector<Tensor>& inputs, const AttrMap& attrs) {
  const OpSchema& schema = rk_schema();
  std::vector<bool> present;
  std::vector<const Tensor*> args;
  for (const Tensor& tensor : inputs) {
    present.push_back(!tensor.empty());
    args.push_back(tensor.empty() ? nullptr : &tensor);
  }
  Node node = make_node("RungeKutta", attrs, present, 1);
  node.domain = kSeqrtDomain;
  SEQRT_RETURN_IF_ERROR(check_node(node, schema));
  KernelChooser choose = [](const Node&,
                            const OpSchema& s) -> Result<KernelFn> {
    return KernelFn(s.reference);
  };
  SubgraphRunner runner = [choose](const Graph& body,
                                   const std::vector<Tensor>& in) {
    return interpret_graph(body, in, choose);
  };
  KernelContext ctx(node, schema, std::move(args), runner);
  SEQRT_RETURN_IF_ERROR(schema.reference(ctx));
  return ctx.outputs()[0];
}

Result<std::vector<ValueInfo>> infer_rk(const std::vector<ValueInfo>& inputs,
                                        const AttrMap& attrs) {
  const OpSchema& schema = rk_schema();
  std::vector<bool> present;
  for (const ValueInfo& in : inputs) {
    present.push_back(in.dtype != DType::kUndefined);
  }
  Node node = make_node("RungeKutta", attrs, present, 1);
  node.domain = kSeqrtDomain;
  SEQRT_RETURN_IF_ERROR(check_node(node, schema));
  InferContext ctx(node, schema, inputs);
  SEQRT_RETURN_IF_ERROR(schema.infer(ctx));
  return ctx.outputs();
}

Tensor f64s(std::vector<int64_t> dims, std::vector<double> values) {
  return Tensor::from_vector<double>(std::move(dims), values);
}

// The step of dy/dt = λy is y·(Taylor polynomial of e^λ) of the order.
void expect_taylor(const std::string& method, int order) {
  const double lambda = 0.3;
  Tensor y = f64s({2, 3}, {1.0, -2.0, 0.5, 3.0, 0.25, -1.5});
  Result<Tensor> out = run_rk(
      {y}, attrs_of(linear_body(DType::kF64, Shape{2, 3}, lambda), method));
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  double factor = 0.0;
  double term = 1.0;
  for (int k = 0; k <= order; ++k) {
    factor += term;
    term *= lambda / (k + 1);
  }
  std::vector<double> want;
  for (double v : values_of(y)) want.push_back(v * factor);
  expect_values(*out, want, 1e-14);
}

TEST(RungeKutta, EulerIsFirstOrderTaylor) { expect_taylor("euler", 1); }
TEST(RungeKutta, Rk2IsSecondOrderTaylor) { expect_taylor("rk2", 2); }
TEST(RungeKutta, Rk4IsFourthOrderTaylor) { expect_taylor("rk4", 4); }

TEST(RungeKutta, ZeroGateEqualsRk2) {
  Tensor y = f32({3, 4}, {0.1f, -0.7f, 1.3f, 0.4f, -2.0f, 0.9f, 0.0f, 0.5f,
                          1.1f, -0.3f, 0.8f, -1.2f});
  auto body = tanh_body(Shape{3, 4});
  Result<Tensor> rk2 = run_rk({y}, attrs_of(body, "rk2"));
  Tensor weight = Tensor::allocate(DType::kF32, {8}).value();
  Tensor bias = Tensor::allocate(DType::kF32, {1}).value();
  Result<Tensor> gated = run_rk({y, weight, bias}, attrs_of(body, "rk2_gated"));
  ASSERT_TRUE(rk2.is_ok()) << rk2.status().to_string();
  ASSERT_TRUE(gated.is_ok()) << gated.status().to_string();
  expect_values(*gated, values_of(*rk2), 0.0);
}

TEST(RungeKutta, GateIsOneScalarPerPosition) {
  // F = λy with λ = 1: F1 = y, F2 = 2y. Row r's logit is
  // w1·y_r + w2·2y_r + b with the halves w1, w2 of gate_weight.
  Tensor y = f64s({2, 2}, {1.0, 2.0, -1.0, 0.5});
  Tensor weight = f64s({4}, {0.5, -0.25, 0.1, 0.2});
  Tensor bias = f64s({1}, {0.3});
  Result<Tensor> out =
      run_rk({y, weight, bias},
             attrs_of(linear_body(DType::kF64, Shape{2, 2}, 1.0), "rk2_gated"));
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  std::vector<double> want;
  for (int r = 0; r < 2; ++r) {
    double a = y.element_f64(2 * r);
    double b = y.element_f64(2 * r + 1);
    double logit = 0.5 * a - 0.25 * b + 0.1 * 2 * a + 0.2 * 2 * b + 0.3;
    double g = 1.0 / (1.0 + std::exp(-logit));
    for (double v : {a, b}) want.push_back(v + g * v + (1 - g) * 2 * v);
  }
  expect_values(*out, want, 1e-14);
}

TEST(RungeKutta, BodyCapturesAnOuterValue) {
  GraphBuilder b("scaled");
  ValueId y = b.input("y", DType::kF32, Shape{2});
  ValueId s = b.capture("s", DType::kF32, Shape{});
  b.output(b.add("Mul", {y, s}), "f");
  auto body = typed_body(std::move(b));
  // The kernel itself only passes y; the capture is the runner's business,
  // so an unknown capture is reported as an error, not a crash.
  Result<Tensor> out = run_rk({f32({2}, {1, 2})}, attrs_of(body, "euler"));
  EXPECT_FALSE(out.is_ok());
  expect_error(out.status(), {"[RungeKutta]", "body"});
}

TEST(RungeKutta, InfersYsType) {
  auto out = infer_rk({typed(DType::kF32, Shape{sym("T"), 4})},
                      attrs_of(tanh_body(Shape{sym("T"), 4}), "rk4"));
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kF32);
  EXPECT_EQ(*(*out)[0].shape, Shape({sym("T"), 4}));
}

TEST(RungeKutta, BodyWithTwoInputsIsAnError) {
  GraphBuilder b("two");
  ValueId x = b.input("x", DType::kF32, Shape{2});
  ValueId y = b.input("y", DType::kF32, Shape{2});
  b.output(b.add("Add", {x, y}), "f");
  auto body = typed_body(std::move(b));
  expect_error(run_rk({f32({2}, {1, 2})}, attrs_of(body, "euler")).status(),
               {"[RungeKutta] node 'test'", "'body' must take 1 inputs"});
  expect_error(infer_rk({typed(DType::kF32, Shape{2})}, attrs_of(body, "euler"))
                   .status(),
               {"'body' must take 1 inputs"});
}

std::shared_ptr<Graph> doubling_body() {
  GraphBuilder b("widen");
  ValueId y = b.input("y", DType::kF32, Shape{2});
  b.output(b.add("Concat", {y, y}, {{"axis", int64_t{0}}}), "f");
  return typed_body(std::move(b));
}

TEST(RungeKutta, ShapeChangingBodyIsAnError) {
  expect_error(
      infer_rk({typed(DType::kF32, Shape{2})}, attrs_of(doubling_body(), "rk2"))
          .status(),
      {"[RungeKutta]", "must keep y's shape (2)", "(4)"});
  expect_error(
      run_rk({f32({2}, {1, 2})}, attrs_of(doubling_body(), "rk2")).status(),
      {"[RungeKutta]", "stage 1 gave f32(4)"});
}

TEST(RungeKutta, GatedNeedsTheGate) {
  auto body = tanh_body(Shape{2, 2});
  Tensor y = f32({2, 2}, {1, 2, 3, 4});
  expect_error(run_rk({y}, attrs_of(body, "rk2_gated")).status(),
               {"[RungeKutta]", "needs gate_weight and gate_bias"});
  expect_error(
      infer_rk({typed(DType::kF32, Shape{2, 2})}, attrs_of(body, "rk2_gated"))
          .status(),
      {"needs gate_weight and gate_bias"});
  Tensor w = f32({4}, {0, 0, 0, 0});
  Tensor b = f32({1}, {0});
  expect_error(run_rk({y, w, b}, attrs_of(body, "rk4")).status(),
               {"only read by method \"rk2_gated\""});
}

TEST(RungeKutta, GateWeightMustBeTwiceTheWidth) {
  auto body = tanh_body(Shape{2, 2});
  Tensor y = f32({2, 2}, {1, 2, 3, 4});
  Tensor b = f32({1}, {0});
  expect_error(
      run_rk({y, f32({2}, {0, 0}), b}, attrs_of(body, "rk2_gated")).status(),
      {"[RungeKutta]", "gate_weight must be (2d) = (4), got (2)"});
  expect_error(
      run_rk({y, f32({2, 2}, {0, 0, 0, 0}), b}, attrs_of(body, "rk2_gated"))
          .status(),
      {"gate_weight must be (2d) = (4), got (2,2)"});
  expect_error(
      infer_rk({typed(DType::kF32, Shape{2, 2}), typed(DType::kF32, Shape{3}),
                typed(DType::kF32, Shape{1})},
               attrs_of(body, "rk2_gated"))
          .status(),
      {"gate_weight must be (2d) = (4), got (3)"});
  expect_error(run_rk({y, f32({4}, {0, 0, 0, 0}), f32({2}, {0, 0})},
                      attrs_of(body, "rk2_gated"))
                   .status(),
               {"gate_bias must be (1), got (2)"});
}

TEST(RungeKutta, UnknownMethodIsAnError) {
  Result<Tensor> out = run_rk({f32({2, 2}, {1, 2, 3, 4})},
                              attrs_of(tanh_body(Shape{2, 2}), "midpoint"));
  EXPECT_FALSE(out.is_ok());
}

TEST(RungeKutta, BodyDtypeMustMatchY) {
  expect_error(infer_rk({typed(DType::kF64, Shape{2, 2})},
                        attrs_of(tanh_body(Shape{2, 2}), "euler"))
                   .status(),
               {"the body's input must be f64, got f32"});
}

}  // namespace
}  // namespace seqrt
