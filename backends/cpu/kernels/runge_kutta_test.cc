// CPU kernel of seqrt::RungeKutta against the reference kernel: a small
// transformer layer (MatMul + Add + Gelu/Relu + LayerNormalization) with
// captured weights for every method, the Taylor polynomials of a linear
// body, a zero gate, a body that returns its input (its output aliases the
// stage buffer the kernel reuses), f16, and runtime errors.
#include <gtest/gtest.h>

#include <memory>

#include "backends/cpu/kernels/kernel_test_util.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"

namespace seqrt::cpu {
namespace {

using namespace kernel_testing;  // NOLINT

std::shared_ptr<Graph> typed(GraphBuilder builder) {
  Result<Graph> graph = std::move(builder).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  Status status = infer_graph(*graph);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  return std::make_shared<Graph>(std::move(graph).value());
}

constexpr int64_t kD = 32;
constexpr int64_t kH = 64;

std::shared_ptr<Graph> layer_body(const std::string& activation) {
  GraphBuilder b("layer");
  ValueId y = b.input("y", DType::kF32, Shape{Dim::symbol("B"), 17, kD});
  ValueId w1 = b.capture("w1", DType::kF32, Shape{kD, kH});
  ValueId b1 = b.capture("b1", DType::kF32, Shape{kH});
  ValueId w2 = b.capture("w2", DType::kF32, Shape{kH, kD});
  ValueId b2 = b.capture("b2", DType::kF32, Shape{kD});
  ValueId g = b.capture("g", DType::kF32, Shape{kD});
  ValueId h = b.add(activation, {b.add("Add", {b.add("MatMul", {y, w1}), b1})});
  ValueId o = b.add("Add", {b.add("MatMul", {h, w2}), b2});
  b.output(b.add("LayerNormalization", {o, g}), "f");
  return typed(std::move(b));
}

Scope layer_weights() {
  return {{"w1", uniform({kD, kH}, 1, -0.3, 0.3)},
          {"b1", uniform({kH}, 2, -0.1, 0.1)},
          {"w2", uniform({kH, kD}, 3, -0.3, 0.3)},
          {"b2", uniform({kD}, 4, -0.1, 0.1)},
          {"g", uniform({kD}, 5, 0.5, 1.5)}};
}

AttrMap rk(std::shared_ptr<Graph> body, const char* method) {
  return {{"body", std::move(body)}, {"method", method}};
}

Result<Tensor> run_rk_cpu(const std::vector<Tensor>& inputs,
                          const AttrMap& attrs, const Scope* scope = nullptr) {
  SEQRT_ASSIGN_OR_RETURN(auto out, run_kernel(true, kSeqrtDomain, "RungeKutta",
                                              inputs, attrs, 1, scope));
  return out[0];
}

TEST(CpuRungeKutta, TransformerLayerMatchesReference) {
  Scope scope = layer_weights();
  Tensor y = uniform({3, 17, kD}, 6, -1, 1);
  for (const char* activation : {"Gelu", "Relu"}) {
    auto body = layer_body(activation);
    for (const char* method : {"euler", "rk2", "rk4"}) {
      SCOPED_TRACE(std::string(activation) + " " + method);
      expect_matches_reference(kSeqrtDomain, "RungeKutta", {y},
                               rk(body, method), 1e-4, 1, &scope);
    }
    expect_matches_reference(
        kSeqrtDomain, "RungeKutta",
        {y, uniform({2 * kD}, 7, -0.5, 0.5), uniform({1}, 8)},
        rk(body, "rk2_gated"), 1e-4, 1, &scope);
  }
}

std::shared_ptr<Graph> linear_body(DType dtype, float lambda) {
  GraphBuilder b("linear");
  ValueId y = b.input("y", dtype, Shape{5, 7});
  Tensor l = Tensor::allocate(dtype, {}).value();
  l.set_element_f64(0, lambda);
  b.output(b.add("Mul", {y, b.constant("l", l)}), "f");
  return typed(std::move(b));
}

TEST(CpuRungeKutta, LinearBodyGivesTaylorPolynomials) {
  const double lambda = -0.6;
  Tensor y = uniform({5, 7}, 9, -2, 2);
  const std::pair<const char*, int> orders[] = {
      {"euler", 1}, {"rk2", 2}, {"rk4", 4}};
  for (const auto& [method, order] : orders) {
    SCOPED_TRACE(method);
    Result<Tensor> out =
        run_rk_cpu({y}, rk(linear_body(DType::kF32, lambda), method));
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    double factor = 0, term = 1;
    for (int k = 0; k <= order; ++k, term *= lambda / k) factor += term;
    for (int64_t i = 0; i < y.num_elements(); ++i) {
      EXPECT_NEAR(out->element_f64(i), y.element_f64(i) * factor, 2e-6);
    }
  }
}

TEST(CpuRungeKutta, ZeroGateEqualsRk2) {
  Scope scope = layer_weights();
  Tensor y = uniform({2, 17, kD}, 10);
  auto body = layer_body("Gelu");
  Result<Tensor> plain = run_rk_cpu({y}, rk(body, "rk2"), &scope);
  Tensor zero_w = Tensor::allocate(DType::kF32, {2 * kD}).value();
  Tensor zero_b = Tensor::allocate(DType::kF32, {1}).value();
  Result<Tensor> gated =
      run_rk_cpu({y, zero_w, zero_b}, rk(body, "rk2_gated"), &scope);
  ASSERT_TRUE(plain.is_ok()) << plain.status().to_string();
  ASSERT_TRUE(gated.is_ok()) << gated.status().to_string();
  expect_close(*gated, *plain, 1e-6);
}

TEST(CpuRungeKutta, BodyReturningItsInputAliasesTheStageBuffer) {
  // F(y) = y: every stage's output is the stage input itself, which the
  // kernel overwrites with the next stage input in the same pass.
  GraphBuilder b("identity");
  b.output(b.add("Identity", {b.input("y", DType::kF32, Shape{3, 1000})}), "f");
  auto body = typed(std::move(b));
  Tensor y = uniform({3, 1000}, 11);
  for (const char* method : {"rk2", "rk4"}) {
    SCOPED_TRACE(method);
    expect_matches_reference(kSeqrtDomain, "RungeKutta", {y}, rk(body, method),
                             1e-6);
  }
  Result<Tensor> out = run_rk_cpu({y}, rk(body, "rk4"));
  ASSERT_TRUE(out.is_ok());
  EXPECT_NEAR(out->element_f64(5), y.element_f64(5) * (65.0 / 24), 1e-6);
}

TEST(CpuRungeKutta, HalfPrecision) {
  Tensor y = uniform({5, 7}, 12, -1, 1, DType::kF16);
  for (const char* method : {"euler", "rk2", "rk4"}) {
    expect_matches_reference(kSeqrtDomain, "RungeKutta", {y},
                             rk(linear_body(DType::kF16, 0.5f), method), 2e-3);
  }
}

TEST(CpuRungeKutta, Errors) {
  Tensor y = uniform({5, 7}, 13);
  auto body = linear_body(DType::kF32, 0.5f);
  op_testing::expect_error(run_rk_cpu({y}, rk(body, "rk2_gated")).status(),
                           {"[RungeKutta]", "needs gate_weight and gate_bias"});
  op_testing::expect_error(
      run_rk_cpu({y, uniform({7}, 14), uniform({1}, 15)}, rk(body, "rk2_gated"))
          .status(),
      {"gate_weight must be (2d) = (14), got (7)"});
  // A body whose declared shapes let it through typing but which changes
  // the shape at run time.
  GraphBuilder widen("widen");
  ValueId x = widen.input("y", DType::kF32, Shape{Dim::symbol("n"), 7});
  widen.output(widen.add("Concat", {x, x}, {{"axis", int64_t{0}}}), "f");
  op_testing::expect_error(
      run_rk_cpu({y}, rk(typed(std::move(widen)), "rk4")).status(),
      {"[RungeKutta]", "stage 1 gave f32(10,7)"});
}

}  // namespace
}  // namespace seqrt::cpu
