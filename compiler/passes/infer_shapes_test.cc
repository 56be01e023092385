#include <gtest/gtest.h>

#include <memory>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;

TEST(InferShapes, FillsTypesAndReportsChange) {
  GraphBuilder b("g");
  ValueId x = b.input("x", DType::kF32, {Dim::symbol("batch"), 8});
  ValueId w = b.constant(
      "w", Tensor::from_vector<float>({8, 2}, std::vector<float>(16, 0.5f)));
  b.output(b.add("Relu", {b.add("MatMul", {x, w})}), "y");
  Graph graph = build_or_die(std::move(b));
  Result<std::vector<PassStats>> stats =
      run_passes(graph, {infer_shapes_pass(), infer_shapes_pass()});
  ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
  EXPECT_TRUE((*stats)[0].changed);
  EXPECT_FALSE((*stats)[1].changed);
  EXPECT_EQ(graph.value(graph.outputs[0]).dtype, DType::kF32);
  EXPECT_EQ(*graph.value(graph.outputs[0]).shape,
            Shape({Dim::symbol("batch"), 2}));
}

TEST(InferShapes, TypesSubgraphCaptures) {
  GraphBuilder branch("branch");
  branch.output(
      branch.add("Neg", {branch.capture("x", DType::kUndefined, std::nullopt)}),
      "out");
  auto body = std::make_shared<Graph>(branch.graph());
  GraphBuilder b("g");
  b.input("x", DType::kF32, {3});
  ValueId cond = b.input("cond", DType::kBool, {});
  b.output(b.add("If", {cond},
                 {{"then_branch", Attribute(body)},
                  {"else_branch", Attribute(body)}}),
           "y");
  Graph graph = build_or_die(std::move(b));
  Result<std::vector<PassStats>> stats =
      run_passes(graph, {infer_shapes_pass()});
  ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
  EXPECT_EQ(*graph.value(graph.outputs[0]).shape, Shape({3}));
}

}  // namespace
}  // namespace seqrt
