// Control flow on the Vulkan backend: a Scan over a length known at compile
// (fixed, or a symbolic dim bound in CompileOptions) and an If on a constant
// condition run written out and match the reference backend; a Scan over an
// unbound length, an If on a run-time condition and a run whose length
// disagrees with the bound one fail with clear errors.
#include <gtest/gtest.h>

#include "backends/vulkan/test_util.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "testing/random_tensor.h"

namespace seqrt::vulkan {
namespace {

using testing::run_with_reference;

// A recurrence the body computes: s' = tanh(s·W + x_t), out_t = s'·2; W
// (d×d) read from the enclosing graph.
std::shared_ptr<Graph> recurrence_body(int64_t d) {
  GraphBuilder b("body");
  ValueId s = b.input("s", DType::kF32, Shape{1, d});
  ValueId x = b.input("x_t", DType::kF32, Shape{1, d});
  ValueId w = b.capture("w", DType::kF32, Shape{d, d});
  ValueId next = b.add("Tanh", {b.add("Add", {b.add("MatMul", {s, w}), x})});
  b.output(next, "s_next");
  b.output(b.add("Mul", {next, b.constant("two", Tensor::scalar<float>(2.0f))}),
           "out");
  return std::make_shared<Graph>(std::move(b).build().value());
}

// Scan of the body over x (T, 1, d) from state s0 (1, d); outputs the final
// state and the per-step outputs (T, 1, d).
Graph scan_model(Dim length, int64_t d) {
  GraphBuilder b("scan");
  ValueId s0 = b.input("s0", DType::kF32, Shape{1, d});
  ValueId x = b.input("x", DType::kF32, Shape{length, 1, d});
  b.input("w", DType::kF32, Shape{d, d});
  auto outs = b.add_node(
      "Scan", {s0, x},
      {{"body", recurrence_body(d)}, {"num_scan_inputs", int64_t{1}}}, 2);
  b.output(outs[0], "s_final");
  b.output(outs[1], "ys");
  Graph graph = std::move(b).build().value();
  EXPECT_TRUE(infer_graph(graph).is_ok());
  return graph;
}

std::vector<Tensor> scan_inputs(int64_t t, int64_t d) {
  return {random_uniform_f32({1, d}, 1, -1, 1),
          random_uniform_f32({t, 1, d}, 2, -1, 1),
          random_uniform_f32({d, d}, 3, -0.5, 0.5)};
}

void expect_close(const std::vector<Tensor>& got,
                  const std::vector<Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].dims(), want[i].dims()) << "output " << i;
    for (int64_t e = 0; e < want[i].num_elements(); ++e) {
      EXPECT_NEAR(got[i].element_f64(e), want[i].element_f64(e), 1e-5)
          << "output " << i << " element " << e;
    }
  }
}

TEST(VulkanControlFlow, ScanOverAFixedLengthMatchesTheReference) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  std::vector<Tensor> want, got;
  run_with_reference(*backend, scan_model(Dim(12), 8), scan_inputs(12, 8), want,
                     got);
  expect_close(got, want);
}

TEST(VulkanControlFlow, ScanOverABoundLength) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  const Graph graph = scan_model(Dim::symbol("seq"), 4);
  auto unbound = backend->compile(graph, CompileOptions{});
  ASSERT_FALSE(unbound.is_ok());
  EXPECT_NE(unbound.status().message().find("dim 'seq': bind it at compile"),
            std::string::npos)
      << unbound.status().to_string();

  CompileOptions bound;
  bound.dim_bindings["seq"] = 5;
  auto compiled = backend->compile(graph, bound);
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  auto reference = create_reference_backend()->compile(graph, bound);
  ASSERT_TRUE(reference.is_ok());
  auto want = (*reference)->run(scan_inputs(5, 4));
  auto got = (*compiled)->run(scan_inputs(5, 4));
  ASSERT_TRUE(want.is_ok() && got.is_ok()) << got.status().to_string();
  expect_close(*got, *want);
  // Another length than the bound one is refused, not cut short.
  auto other = (*compiled)->run(scan_inputs(7, 4));
  ASSERT_FALSE(other.is_ok());
  EXPECT_NE(other.status().message().find("input 'x' has dims (7,1,4)"),
            std::string::npos)
      << other.status().to_string();
}

// If on `cond` choosing Neg(x) or Abs(x).
Graph if_model(bool constant_cond) {
  GraphBuilder then_b("then");
  then_b.output(then_b.add("Neg", {then_b.capture("x", DType::kF32, Shape{6})}),
                "y");
  GraphBuilder else_b("else");
  else_b.output(else_b.add("Abs", {else_b.capture("x", DType::kF32, Shape{6})}),
                "y");
  GraphBuilder b("if");
  ValueId cond = constant_cond ? b.constant("cond", Tensor::scalar<bool>(false))
                               : b.input("cond", DType::kBool, Shape{});
  b.input("x", DType::kF32, Shape{6});
  b.output(b.add("If", {cond},
                 {{"then_branch",
                   std::make_shared<Graph>(std::move(then_b).build().value())},
                  {"else_branch", std::make_shared<Graph>(
                                      std::move(else_b).build().value())}}),
           "y");
  Graph graph = std::move(b).build().value();
  EXPECT_TRUE(infer_graph(graph).is_ok());
  return graph;
}

TEST(VulkanControlFlow, IfOnAConstantConditionRunsItsBranch) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  std::vector<Tensor> want, got;
  run_with_reference(*backend, if_model(true),
                     {random_uniform_f32({6}, 4, -1, 1)}, want, got);
  expect_close(got, want);
}

TEST(VulkanControlFlow, IfOnARunTimeConditionIsRefusedNamingTheNode) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  const Graph graph = if_model(false);
  EXPECT_FALSE(backend->supports(graph, graph.nodes[0]).is_ok());
  auto compiled = backend->compile(graph, CompileOptions{});
  ASSERT_FALSE(compiled.is_ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(compiled.status().message().find("[If]"), std::string::npos);
  EXPECT_NE(compiled.status().message().find("condition is computed at run"),
            std::string::npos)
      << compiled.status().to_string();
}

}  // namespace
}  // namespace seqrt::vulkan
